/**
 * What the feed API records about its consumers (migration 0007_feed): when each was last seen, and per consumer and
 * store the highest seq the store confirmed it applied. Owner of feed_consumers and feed_applied: nothing else
 * writes them. Offsets are consumer_offsets, written by src/outbox/price-feed.ts.
 *
 * A confirmation never moves back: a late or repeated `POST /feed/v1/applied` with a lower seq changes nothing, so
 * the applied seq only says "every price of this store up to here is on the shelf", never less than was said before.
 */
import { StoreError } from './errors.ts';
import type { FeedAppliedTable } from './schema.ts';
import type { StateDb } from './state-db.ts';

export type AppliedRow = FeedAppliedTable;

/**
 * Records when consumers were last seen (name -> ISO time), in one transaction. Relaxed durability: losing the last
 * of these to a power cut costs a slightly older "last seen", never a price.
 */
export function recordLastSeen(db: StateDb, seen: ReadonlyMap<string, string>): void {
  if (seen.size === 0) return;
  const upsert = db.statement(
    `INSERT INTO feed_consumers (consumer, last_seen_at) VALUES (?, ?)
     ON CONFLICT (consumer) DO UPDATE SET last_seen_at = max(last_seen_at, excluded.last_seen_at)`,
  );
  db.write(
    () => {
      for (const [consumer, at] of seen) upsert.run(consumer, at);
    },
    { durability: 'relaxed' },
  );
}

export interface AppliedResult {
  /** The applied seq as stored after this call (higher than `seq` when a later confirmation came first). */
  applied_seq: number;
  /** False when the stored seq was already at or beyond `seq`. */
  moved: boolean;
}

/**
 * Records that `consumer`'s store `storeId` applied every price of its feed up to `seq`.
 * @throws StoreError SEQ_BEYOND_FEED (a seq no row has yet), INVALID_ARGUMENT.
 */
export function recordApplied(db: StateDb, consumer: string, storeId: string, seq: number, appliedAt: string | null): AppliedResult {
  if (consumer.length === 0 || storeId.length === 0) throw new StoreError('INVALID_ARGUMENT', 'consumer and store_id must not be empty');
  if (!Number.isSafeInteger(seq) || seq < 0) throw new StoreError('INVALID_ARGUMENT', `seq must be a non-negative integer, got ${seq}`);
  return db.write(() => {
    const max = db.statement<number>('SELECT coalesce(max(seq), 0) FROM price_feed').pluck().get() ?? 0;
    if (seq > max) throw new StoreError('SEQ_BEYOND_FEED', `seq ${seq} is beyond the last seq of the feed (${max})`);
    const current = db
      .statement<number>('SELECT applied_seq FROM feed_applied WHERE consumer = ? AND store_id = ?')
      .pluck()
      .get(consumer, storeId);
    if (current !== undefined && current >= seq) return { applied_seq: current, moved: false };
    db.statement(
      `INSERT INTO feed_applied (consumer, store_id, applied_seq, applied_at, confirmed_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (consumer, store_id) DO UPDATE SET applied_seq = excluded.applied_seq,
         applied_at = excluded.applied_at, confirmed_at = excluded.confirmed_at`,
    ).run(consumer, storeId, seq, appliedAt, db.now());
    return { applied_seq: seq, moved: true };
  });
}

/** Every confirmation recorded, by consumer then store. */
export function listApplied(db: StateDb): AppliedRow[] {
  return db.statement<AppliedRow>('SELECT * FROM feed_applied ORDER BY consumer, store_id').all();
}

/** consumer -> last seen (ISO). */
export function lastSeenByConsumer(db: StateDb): Map<string, string> {
  const rows = db.statement<{ consumer: string; last_seen_at: string }>('SELECT consumer, last_seen_at FROM feed_consumers').all();
  return new Map(rows.map((r) => [r.consumer, r.last_seen_at]));
}

/** False on a database not yet migrated to 0007 (a read-only `status` before the new agent first ran). */
export function hasFeedTables(db: StateDb): boolean {
  return db.statement<number>(`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'feed_applied'`).pluck().get() === 1;
}

/** Every store that has a row in the feed (product-level rows aside), sorted. */
export function feedStoreIds(db: StateDb): string[] {
  return db.statement<string>('SELECT DISTINCT store_id FROM price_feed WHERE store_id IS NOT NULL ORDER BY store_id').pluck().all();
}

export interface RowSpan {
  rows: number;
  /** The earliest recorded_at among them; null when there are none. */
  oldest_recorded_at: string | null;
}

/**
 * The feed rows of one store (`null`: the product-level rows) after `afterSeq`; with `due`, only those recorded at or
 * before `recordedBy` whose effective_date is `effectiveBy` or earlier (or none). Reads the (store_id, seq) index
 * range after `afterSeq`: as cheap as the store is up to date.
 */
export function rowsAfter(db: StateDb, storeId: string | null, afterSeq: number, due?: { recordedBy: string; effectiveBy: string }): RowSpan {
  const base = 'SELECT count(*) AS rows, min(recorded_at) AS oldest_recorded_at FROM price_feed WHERE store_id IS ? AND seq > ?';
  if (!due) return db.statement<RowSpan>(base).get(storeId, afterSeq) ?? { rows: 0, oldest_recorded_at: null };
  return (
    db
      .statement<RowSpan>(`${base} AND recorded_at <= ? AND (effective_date IS NULL OR effective_date <= ?)`)
      .get(storeId, afterSeq, due.recordedBy, due.effectiveBy) ?? { rows: 0, oldest_recorded_at: null }
  );
}
