/**
 * Consuming the change feed, as a POS does: rows with seq greater than the last one processed, in seq order, and
 * the offsets of named consumers. The feed is append-only and seq order is commit order (appendFeedRow in
 * src/store/approved-prices.ts), so paging by `seq > last` never skips or repeats a row, however the reads
 * interleave with the agent's writes.
 *
 * Consumer offsets: `last_seq` = the highest seq the consumer (a POS, an export, a person with the CLI) has
 * finished with; it resumes with `seq > last_seq`. An offset past the end of the feed would make the consumer skip
 * rows appended later, so it is refused (here and, for POS systems writing with SQL, by a trigger). Moving an
 * offset backwards replays rows: only on purpose (`force`).
 */
import { type Selectable, sql } from 'kysely';
import { StoreError } from '../store/errors.ts';
import type { PriceFeedTable } from '../store/schema.ts';
import type { StateDb } from '../store/state-db.ts';

export type FeedRow = Selectable<PriceFeedTable>;

export const FEED_PAGE_DEFAULT = 1000;
export const FEED_PAGE_MAX = 10_000;

/** Up to `limit` feed rows with seq > `afterSeq`, oldest first. */
export function readFeed(db: StateDb, afterSeq: number, limit: number = FEED_PAGE_DEFAULT): FeedRow[] {
  if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) {
    throw new StoreError('INVALID_ARGUMENT', `afterSeq must be a non-negative integer, got ${afterSeq}`);
  }
  if (!Number.isInteger(limit) || limit < 1 || limit > FEED_PAGE_MAX) {
    throw new StoreError('INVALID_ARGUMENT', `limit must be 1..${FEED_PAGE_MAX}, got ${limit}`);
  }
  return db.statement<FeedRow>('SELECT * FROM price_feed WHERE seq > ? ORDER BY seq LIMIT ?').all(afterSeq, limit);
}

/** The last seq appended, 0 for an empty feed. */
export function maxSeq(db: StateDb): number {
  return db.statement<number>('SELECT coalesce(max(seq), 0) FROM price_feed').pluck().get() ?? 0;
}

/** The newest withdrawals (cancelled prices), newest first. */
export function lastWithdrawals(db: StateDb, limit: number): FeedRow[] {
  return db.statement<FeedRow>(`SELECT * FROM price_feed WHERE kind = 'withdrawal' ORDER BY seq DESC LIMIT ?`).all(limit);
}

export interface ConsumerOffset {
  consumer: string;
  last_seq: number;
  updated_at: string;
  /** Feed rows the consumer has not processed yet: max(seq) - last_seq. */
  lag: number;
}

export interface AckOptions {
  /** Allow moving the offset backwards (to re-read rows). */
  force?: boolean;
}

/**
 * Records that `consumer` has processed every row up to `seq`, in one transaction.
 * @throws StoreError SEQ_BEYOND_FEED, OFFSET_BACKWARDS (unless forced), INVALID_ARGUMENT.
 */
export function ackConsumer(db: StateDb, consumer: string, seq: number, options: AckOptions = {}): ConsumerOffset {
  if (consumer.trim().length === 0) throw new StoreError('INVALID_ARGUMENT', 'consumer name is empty');
  if (!Number.isSafeInteger(seq) || seq < 0) {
    throw new StoreError('INVALID_ARGUMENT', `seq must be a non-negative integer, got ${seq}`);
  }
  return db.write(() => {
    const max = maxSeq(db);
    if (seq > max) throw new StoreError('SEQ_BEYOND_FEED', `seq ${seq} is beyond the last seq of the feed (${max})`);
    const current = db
      .statement<number>('SELECT last_seq FROM consumer_offsets WHERE consumer = ?')
      .pluck()
      .get(consumer);
    if (current !== undefined && seq < current && options.force !== true) {
      throw new StoreError('OFFSET_BACKWARDS', `${consumer} is at ${current}; moving back to ${seq} needs --force`);
    }
    const now = db.now();
    db.statement(
      `INSERT INTO consumer_offsets (consumer, last_seq, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (consumer) DO UPDATE SET last_seq = excluded.last_seq, updated_at = excluded.updated_at`,
    ).run(consumer, seq, now);
    return { consumer, last_seq: seq, updated_at: now, lag: max - seq };
  });
}

/** Every consumer with its lag, the most behind first. */
export async function listConsumers(db: StateDb): Promise<ConsumerOffset[]> {
  const rows = await db.kysely
    .selectFrom('consumer_offsets')
    .select(['consumer', 'last_seq', 'updated_at'])
    .select(sql<number>`(SELECT coalesce(max(seq), 0) FROM price_feed) - last_seq`.as('lag'))
    .orderBy('last_seq')
    .orderBy('consumer')
    .execute();
  return rows;
}
