/**
 * A POS in another process reading the SQLite state read-only while the agent writes (what WAL must allow). The
 * reader is a CommonJS script run with `node -e`: it finds better-sqlite3 at BETTER_SQLITE3 and the database at
 * DB_PATH, writes `ready\n` once it has opened the database, then what it read (one JSON text), and exits.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

export interface PosReaderExit {
  code: number | null;
  stderr: string;
  /** What it wrote after `ready\n`. */
  read: string;
}

/** Starts `script` on the database at `dbPath` (more variables in `env`); resolves once it is ready. */
export async function startPosReader(script: string, dbPath: string, env: Record<string, string> = {}): Promise<{ exited: Promise<PosReaderExit> }> {
  const child = spawn(process.execPath, ['-e', script], {
    env: { ...process.env, DB_PATH: dbPath, ...env, BETTER_SQLITE3: createRequire(import.meta.url).resolve('better-sqlite3') },
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
