/**
 * A POS in another process reading the SQLite state read-only while the agent writes (what WAL must allow). The
 * reader is a CommonJS script run with `node -e`: it finds better-sqlite3 at BETTER_SQLITE3 and the database at
 * DB_PATH, writes `ready\n` once it has opened the database, then what it read (one JSON text), and exits.
 * feedReaderScript writes the usual one: it pages through the feed as a POS does.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

export interface FeedReading {
  /** Rows per page (`seq > last ORDER BY seq LIMIT pageRows`). */
  pageRows: number;
  /** The reader stops once it has read this many feed rows, or after `deadlineMs`. */
  total: number;
  deadlineMs: number;
  /** Statements run once after the database is open (`db`). */
  setup?: string;
  /** Statements run after each non-empty page (`rows`; `seqs` and `last` already hold it). */
  onPage?: string;
  /** An expression of more fields for the JSON written at the end, beside `seqs`. */
  result?: string;
}

/** A reader script polling the feed every 2 ms, `seq > last` pages, until it has `total` rows; it writes { seqs, ...result }. */
export function feedReaderScript(reading: FeedReading): string {
  return `
const Database = require(process.env.BETTER_SQLITE3);
const db = new Database(process.env.DB_PATH, { readonly: true });
db.pragma('busy_timeout = 5000');
const page = db.prepare('SELECT seq, approval_id FROM price_feed WHERE seq > ? ORDER BY seq LIMIT ${reading.pageRows}');
let last = 0;
const seqs = [];
const deadline = Date.now() + ${reading.deadlineMs};
${reading.setup ?? ''}
function poll() {
  const rows = page.all(last);
  if (rows.length > 0) {
    for (const row of rows) seqs.push(row.seq);
    last = rows[rows.length - 1].seq;
    ${reading.onPage ?? ''}
  }
  if (seqs.length >= ${reading.total} || Date.now() > deadline) {
    process.stdout.write(JSON.stringify({ seqs, ...(${reading.result ?? '{}'}) }));
    db.close();
    return;
  }
  setTimeout(poll, 2);
}
process.stdout.write('ready\\n');
poll();
`;
}

export interface PosReaderExit {
  code: number | null;
  stderr: string;
  /** What it wrote after `ready\n`. */
  read: string;
}

/** Starts `script` on the database at `dbPath`; resolves once it is ready. */
export async function startPosReader(script: string, dbPath: string): Promise<{ exited: Promise<PosReaderExit> }> {
  const child = spawn(process.execPath, ['-e', script], {
    env: { ...process.env, DB_PATH: dbPath, BETTER_SQLITE3: createRequire(import.meta.url).resolve('better-sqlite3') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<PosReaderExit>((resolve) =>
    child.on('close', (code) => resolve({ code, stderr: err, read: out.slice(out.indexOf('\n') + 1) })),
  );
  while (!out.includes('ready\n')) {
    if (child.exitCode !== null) throw new Error(`reader died: ${err}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return { exited };
}
