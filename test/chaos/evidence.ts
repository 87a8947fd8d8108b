/**
 * What the chaos checks read after the run: the reports and rejects files in the inboxes, the outbox in the
 * agent's database (read-only, as a POS would), and every byte under the run's folder (for the key).
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { parse } from 'csv-parse/sync';
import type { PushReport, PushReportRows } from '../../src/ingest/file/report.ts';
import { openTestDb } from '../support/state-db.ts';
import { sqlColumn, sqlRows } from '../support/state-sql.ts';

export interface FoundReport {
  readonly path: string;
  readonly file: string;
  readonly status: string;
  readonly rows: PushReportRows | null;
  /** When the file was claimed: the files of a source are pushed one after another, in this order. */
  readonly claimedAt: string;
  readonly rejectsFile: string | null;
  readonly error: { code: string; message: string } | null;
}

async function walk(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir, { recursive: true });
  } catch {
    return [];
  }
  return names.map((n) => join(dir, n));
}

/** Every `.report.json` under an inbox's archive/ and failed/ folders. */
export async function reportsIn(inbox: string): Promise<FoundReport[]> {
  const out: FoundReport[] = [];
  for (const top of ['archive', 'failed']) {
    for (const path of await walk(join(inbox, top))) {
      if (!path.endsWith('.report.json')) continue;
      const json = JSON.parse(await readFile(path, 'utf8')) as PushReport;
      out.push({ path, file: json.file, status: json.status, rows: json.rows, claimedAt: json.timings.claimed_at, rejectsFile: json.rejects_file, error: json.error });
    }
  }
  return out;
}

/** Names of data files still in the inbox itself or in processing/ (markers, temporary and dot-files aside). */
export async function unfinishedIn(inbox: string): Promise<string[]> {
  const out: string[] = [];
  for (const dir of [inbox, join(inbox, 'processing')]) {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (name.startsWith('.') || !name.toLowerCase().endsWith('.csv')) continue;
      // A file the agent moves between the listing and this look is on its way, not left behind.
      if ((await stat(join(dir, name)).catch(() => null))?.isFile() === true) out.push(join(dir, name));
    }
  }
  return out;
}

/** The rejects CSV as records: [line, ...fields, field, code, message]; the header record dropped. */
export async function rejectRecords(path: string, delimiter: string): Promise<string[][]> {
  const text = await readFile(path, 'utf8');
  const records: string[][] = parse(text, { bom: true, delimiter, relax_column_count: true, relax_quotes: true });
  return records.slice(1);
}

export interface OutboxView {
  /** approval_id of every `price` row, in feed order (duplicates kept). */
  readonly prices: number[];
  readonly withdrawals: number[];
  readonly ackStatus: Map<number, string | null>;
  readonly pendingAcks: number;
}

/** The outbox through a short-lived read-only connection; null while the database does not exist yet. */
export function readOutbox(dbPath: string): OutboxView | null {
  if (!existsSync(dbPath)) return null;
  let db: Database.Database | null = null;
  try {
    db = new Database(dbPath, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    const prices = db.prepare(`SELECT approval_id FROM price_feed WHERE kind = 'price' ORDER BY seq`).pluck().all() as number[];
    const withdrawals = db.prepare(`SELECT approval_id FROM price_feed WHERE kind = 'withdrawal' ORDER BY seq`).pluck().all() as number[];
    const acks = db
      .prepare('SELECT a.id, k.status AS ack_status FROM approved_prices a LEFT JOIN approval_acks k ON k.approval_id = a.id')
      .all() as { id: number; ack_status: string | null }[];
    return {
      prices,
      withdrawals,
      ackStatus: new Map(acks.map((a) => [a.id, a.ack_status])),
      pendingAcks: acks.filter((a) => a.ack_status === 'pending').length,
    };
  } catch {
    return null; // still being created or migrated
  } finally {
    db?.close();
  }
}

/**
 * The outbox of a state on this run's backend (a PostgreSQL state of an HA pair), as readOutbox reads a SQLite file;
 * null while the state does not exist yet.
 */
export async function readStateOutbox(stateDir: string): Promise<OutboxView | null> {
  const db = await openTestDb(stateDir, { readonly: true }).catch(() => null);
  if (db === null) return null;
  try {
    const prices = await sqlColumn<number>(db, `SELECT approval_id FROM price_feed WHERE kind = 'price' ORDER BY seq`);
    const withdrawals = await sqlColumn<number>(db, `SELECT approval_id FROM price_feed WHERE kind = 'withdrawal' ORDER BY seq`);
    const acks = await sqlRows<{ id: number; ack_status: string | null }>(db, 'SELECT a.id, k.status AS ack_status FROM approved_prices a LEFT JOIN approval_acks k ON k.approval_id = a.id');
    return {
      prices: prices.map(Number),
      withdrawals: withdrawals.map(Number),
      ackStatus: new Map(acks.map((a) => [Number(a.id), a.ack_status])),
      pendingAcks: acks.filter((a) => a.ack_status === 'pending').length,
    };
  } catch {
    return null; // still being created or migrated
  } finally {
    await db.close();
  }
}

/** Files under `dir` containing any of `secrets` (byte search, binary files included), except those excluded. */
export async function filesContaining(dir: string, secrets: readonly string[], exclude: readonly string[]): Promise<{ scanned: number; hits: string[] }> {
  const hits: string[] = [];
  let scanned = 0;
  const needles = secrets.map((s) => Buffer.from(s, 'utf8'));
  for (const path of await walk(dir)) {
    if (exclude.includes(path)) continue;
    let bytes: Buffer;
    try {
      if (!(await stat(path)).isFile()) continue;
      bytes = await readFile(path);
    } catch {
      continue; // gone meanwhile (a temporary name)
    }
    scanned += 1;
    if (needles.some((n) => bytes.includes(n))) hits.push(path);
  }
  return { scanned, hits };
}
