/**
 * The bookkeeping of the per-store export files (src/outbox/store-files.ts writes the files): per store, the last
 * seq that is in a durable file and the range being written; overall, the seq up to which every store is exported.
 * Owner of outbox_exports and outbox_export_scan; reads price_feed.
 *
 * What survives a crash, per file: (1) `beginExportRange` commits the range (last_seq, pending_to_seq] as pending,
 * (2) the file is written and made durable, (3) `completeExportRange` commits last_seq = pending_to_seq. Dying before
 * (3) leaves the range pending, and the next run writes the same range again. The checkpoint (last_seq) moves only
 * after the file it stands for is durable.
 */
import type { FeedRow } from './price-feed.ts';
import { PRODUCT_LEVEL_STORE_KEY, type OutboxExportsTable } from './schema.ts';
import { sqlOf } from './sql-db.ts';
import type { StateDb } from './state-db.ts';

export type ExportState = OutboxExportsTable;

/** store_id of a store key (null for the product-level key `_all`). */
function storeIdOf(key: string): string | null {
  return key === PRODUCT_LEVEL_STORE_KEY ? null : key;
}

/** Every store's feed rows up to this seq are in files (0 before the first export). */
export async function exportScanSeq(db: StateDb): Promise<number> {
  return (await sqlOf(db).value<number>('SELECT scanned_seq FROM outbox_export_scan WHERE id = 1')) ?? 0;
}

/** Store keys with a range still pending, and those with feed rows in (afterSeq, upTo]. */
export async function storesToExport(db: StateDb, afterSeq: number, upTo: number): Promise<Set<string>> {
  const sql = sqlOf(db);
  const pending = await sql.all<{ store_key: string }>('SELECT store_key FROM outbox_exports WHERE pending_to_seq IS NOT NULL');
  const fresh = await sql.all<{ store_id: string | null }>('SELECT DISTINCT store_id FROM price_feed WHERE seq > ? AND seq <= ?', [
    afterSeq,
    upTo,
  ]);
  const keys = new Set(pending.map((r) => r.store_key));
  for (const r of fresh) keys.add(r.store_id ?? PRODUCT_LEVEL_STORE_KEY);
  return keys;
}

export async function exportState(db: StateDb, key: string): Promise<ExportState | undefined> {
  return sqlOf(db).get<ExportState>('SELECT * FROM outbox_exports WHERE store_key = ?', [key]);
}

/**
 * Commits (after, to] as the store's pending range, before its file is written; false when the store's state is no
 * longer `after` with nothing pending: another process (the daemon, a one-shot pull or export) chose the next range
 * first, and the caller reads the state again. So the ranges of a store follow each other, each chosen once, and a
 * row is never in two differently named files.
 */
export async function beginExportRange(db: StateDb, key: string, after: number, to: number): Promise<boolean> {
  return sqlOf(db).write(async (tx) => {
    const inserted = await tx.run(
      `INSERT INTO outbox_exports (store_key, last_seq, pending_to_seq, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (store_key) DO NOTHING`,
      [key, after, to, tx.now],
    );
    if (inserted === 1) return true;
    const claimed = await tx.run(
      'UPDATE outbox_exports SET pending_to_seq = ?, updated_at = ? WHERE store_key = ? AND last_seq = ? AND pending_to_seq IS NULL',
      [to, tx.now, key, after],
    );
    return claimed === 1;
  });
}

/**
 * The pending range (…, to] is in a durable file (`file`; null when the range held no row of the store). A no-op
 * when that range is no longer pending (another process wrote the same file and completed it first): the checkpoint
 * never moves back.
 */
export async function completeExportRange(db: StateDb, key: string, to: number, file: string | null): Promise<void> {
  await sqlOf(db).write((tx) =>
    tx.run(
      `UPDATE outbox_exports SET last_seq = ?, pending_to_seq = NULL, last_file = coalesce(?, last_file), updated_at = ?
       WHERE store_key = ? AND pending_to_seq = ?`,
      [to, file, tx.now, key, to],
    ),
  );
}

/** Every store's feed rows up to `upTo` are in files: the next run need not look below it. Never moves back. */
export async function recordExportScan(db: StateDb, upTo: number): Promise<void> {
  const sql = sqlOf(db);
  await sql.write((tx) =>
    tx.run(
      `INSERT INTO outbox_export_scan (id, scanned_seq, updated_at) VALUES (1, ?, ?)
       ON CONFLICT (id) DO UPDATE SET scanned_seq = ${sql.dialect.greatest('outbox_export_scan.scanned_seq', 'excluded.scanned_seq')},
         updated_at = excluded.updated_at`,
      [upTo, tx.now],
    ),
  );
}

/** The first seq and the number of the store's feed rows in (after, to]. */
export async function storeFeedRange(db: StateDb, key: string, after: number, to: number): Promise<{ fromSeq: number | null; rows: number }> {
  const row = await sqlOf(db).get<{ from_seq: number | null; rows: number }>(
    'SELECT min(seq) AS from_seq, count(*) AS rows FROM price_feed WHERE store_id IS NOT DISTINCT FROM ? AND seq > ? AND seq <= ?',
    [storeIdOf(key), after, to],
  );
  return { fromSeq: row?.from_seq ?? null, rows: row?.rows ?? 0 };
}

/** The seq of the store's `maxRows`-th feed row after `after` (or its last one up to `upTo`); null when none. */
export async function exportChunkEnd(db: StateDb, key: string, after: number, upTo: number, maxRows: number): Promise<number | null> {
  const sql = sqlOf(db);
  const storeId = storeIdOf(key);
  const nth = await sql.value<number>(
    'SELECT seq FROM price_feed WHERE store_id IS NOT DISTINCT FROM ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT 1 OFFSET ?',
    [storeId, after, upTo, maxRows - 1],
  );
  if (nth !== undefined) return nth;
  const last = await sql.value<number | null>(
    'SELECT max(seq) FROM price_feed WHERE store_id IS NOT DISTINCT FROM ? AND seq > ? AND seq <= ?',
    [storeId, after, upTo],
  );
  return last ?? null;
}

/** Up to `limit` of the store's feed rows in (after, to], in seq order. */
export async function storeFeedRows(db: StateDb, key: string, after: number, to: number, limit: number): Promise<FeedRow[]> {
  return sqlOf(db).all<FeedRow>(
    'SELECT * FROM price_feed WHERE store_id IS NOT DISTINCT FROM ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?',
    [storeIdOf(key), after, to, limit],
  );
}
