/**
 * What the feed API records about its consumers (migration 0007_feed): when each was last seen, and per consumer and
 * store the highest seq the store confirmed it applied. Owner of feed_consumers and feed_applied: nothing else
 * writes them. Offsets are consumer_offsets, written by price-feed.ts. Every write here is a consumer's own
 * bookkeeping (WriteOptions.owner 'consumer'): under HA, the standby stores it too (docs/ha.md).
 *
 * A confirmation never moves back: a late or repeated `POST /feed/v1/applied` with a lower seq changes nothing, so
 * the applied seq only says "every price of this store up to here is on the shelf", never less than was said before.
 */
import { StoreError } from './errors.ts';
import { hasTable } from './meta.ts';
import type { FeedAppliedTable } from './schema.ts';
import { sqlOf } from './sql-db.ts';
import type { StateDb } from './state-db.ts';

export type AppliedRow = FeedAppliedTable;

/**
 * Records when consumers were last seen (name -> ISO time), in one transaction. Relaxed durability: losing the last
 * of these to a power cut costs a slightly older "last seen", never a price.
 */
export async function recordLastSeen(db: StateDb, seen: ReadonlyMap<string, string>): Promise<void> {
  if (seen.size === 0) return;
  const sql = sqlOf(db);
  const later = sql.dialect.greatest('feed_consumers.last_seen_at', 'excluded.last_seen_at');
  await sql.write(
    async (tx) => {
      for (const [consumer, at] of seen) {
        await tx.run(
          `INSERT INTO feed_consumers (consumer, last_seen_at) VALUES (?, ?)
           ON CONFLICT (consumer) DO UPDATE SET last_seen_at = ${later}`,
          [consumer, at],
        );
      }
    },
    { durability: 'relaxed', owner: 'consumer' },
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
export async function recordApplied(db: StateDb, consumer: string, storeId: string, seq: number, appliedAt: string | null): Promise<AppliedResult> {
  if (consumer.length === 0 || storeId.length === 0) throw new StoreError('INVALID_ARGUMENT', 'consumer and store_id must not be empty');
  if (!Number.isSafeInteger(seq) || seq < 0) throw new StoreError('INVALID_ARGUMENT', `seq must be a non-negative integer, got ${seq}`);
  return sqlOf(db).write(async (tx) => {
    const max = (await tx.value<number>('SELECT coalesce(max(seq), 0) FROM price_feed')) ?? 0;
    if (seq > max) throw new StoreError('SEQ_BEYOND_FEED', `seq ${seq} is beyond the last seq of the feed (${max})`);
    const current = await tx.value<number>('SELECT applied_seq FROM feed_applied WHERE consumer = ? AND store_id = ?', [consumer, storeId]);
    if (current !== undefined && current >= seq) return { applied_seq: current, moved: false };
    // Guarded as well: a confirmation committed meanwhile (another request, another node of an HA pair) is not undone.
    const changed = await tx.run(
      `INSERT INTO feed_applied (consumer, store_id, applied_seq, applied_at, confirmed_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (consumer, store_id) DO UPDATE SET applied_seq = excluded.applied_seq,
         applied_at = excluded.applied_at, confirmed_at = excluded.confirmed_at
       WHERE feed_applied.applied_seq < excluded.applied_seq`,
      [consumer, storeId, seq, appliedAt, tx.now],
    );
    if (changed === 0) {
      const stored = await tx.value<number>('SELECT applied_seq FROM feed_applied WHERE consumer = ? AND store_id = ?', [consumer, storeId]);
      return { applied_seq: stored ?? seq, moved: false };
    }
    return { applied_seq: seq, moved: true };
  }, { owner: 'consumer' });
}

/** Every confirmation recorded, by consumer then store. */
export async function listApplied(db: StateDb): Promise<AppliedRow[]> {
  return sqlOf(db).all<AppliedRow>('SELECT * FROM feed_applied ORDER BY consumer, store_id');
}

/** consumer -> last seen (ISO). */
export async function lastSeenByConsumer(db: StateDb): Promise<Map<string, string>> {
  const rows = await sqlOf(db).all<{ consumer: string; last_seen_at: string }>('SELECT consumer, last_seen_at FROM feed_consumers');
  return new Map(rows.map((r) => [r.consumer, r.last_seen_at]));
}

/** False on a database not yet migrated to 0007 (a read-only `status` before the new agent first ran). */
export async function hasFeedTables(db: StateDb): Promise<boolean> {
  return hasTable(db, 'feed_applied');
}

/** Every store that has a row in the feed (product-level rows aside), sorted. */
export async function feedStoreIds(db: StateDb): Promise<string[]> {
  const rows = await sqlOf(db).all<{ store_id: string }>('SELECT DISTINCT store_id FROM price_feed WHERE store_id IS NOT NULL ORDER BY store_id');
  return rows.map((r) => r.store_id);
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
export async function rowsAfter(db: StateDb, storeId: string | null, afterSeq: number, due?: { recordedBy: string; effectiveBy: string }): Promise<RowSpan> {
  const base = 'SELECT count(*) AS rows, min(recorded_at) AS oldest_recorded_at FROM price_feed WHERE store_id IS NOT DISTINCT FROM ? AND seq > ?';
  const sql = sqlOf(db);
  const span = due
    ? await sql.get<RowSpan>(`${base} AND recorded_at <= ? AND (effective_date IS NULL OR effective_date <= ?)`, [storeId, afterSeq, due.recordedBy, due.effectiveBy])
    : await sql.get<RowSpan>(base, [storeId, afterSeq]);
  return span ?? { rows: 0, oldest_recorded_at: null };
}
