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
  checkPage(afterSeq, limit);
  return db.statement<FeedRow>('SELECT * FROM price_feed WHERE seq > ? ORDER BY seq LIMIT ?').all(afterSeq, limit);
}

/**
 * Which feed rows a consumer sees: the rows of its stores and every product-level row (store_id NULL, meant for
 * every store); `'*'` sees every row.
 */
export type StoreScope = '*' | readonly string[];

/**
 * Up to this many stores, a scoped page is merged from one index read per store (and one for the product-level
 * rows): each reads at most `limit` seqs from the (store_id, seq) index, however long the feed. Above it, the page is
 * read in seq order with the stores as a filter, which costs the rows of other stores passed over: cheap when the
 * scope covers a large part of the feed, as a long list of stores does.
 */
const PER_STORE_READS_MAX = 16;

export interface ScopedPage {
  rows: FeedRow[];
  /** The feed's last seq when the page was read: every row of the scope up to it was considered. */
  upTo: number;
}

/**
 * Up to `limit` feed rows of `scope` with seq > `afterSeq`, oldest first. Never a row of a store outside the scope.
 *
 * Consistent without a transaction: the feed's last seq is read first, and every read is bounded by it. seq order is
 * commit order, so every row up to that seq is committed already, and a row committed meanwhile (by the agent or
 * another process) has a larger seq and belongs to the next page: a page merged from several reads never passes a
 * row over.
 */
export function readScopedPage(db: StateDb, scope: StoreScope, afterSeq: number, limit: number = FEED_PAGE_DEFAULT): ScopedPage {
  checkPage(afterSeq, limit);
  const upTo = maxSeq(db);
  if (scope === '*') {
    const rows = db.statement<FeedRow>('SELECT * FROM price_feed WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?').all(afterSeq, upTo, limit);
    return { rows, upTo };
  }
  if (scope.length > PER_STORE_READS_MAX) {
    const rows = db
      .statement<FeedRow>(
        // `+store_id`: not through the store index, so that SQLite walks seq order and stops at `limit`.
        `SELECT * FROM price_feed WHERE seq > ? AND seq <= ?
           AND (+store_id IS NULL OR +store_id IN (SELECT value FROM json_each(?)))
         ORDER BY seq LIMIT ?`,
      )
      .all(afterSeq, upTo, JSON.stringify(scope), limit);
    return { rows, upTo };
  }
  const storeSeqs = db.statement<number>('SELECT seq FROM price_feed WHERE store_id = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?').pluck();
  const seqs = db
    .statement<number>('SELECT seq FROM price_feed WHERE store_id IS NULL AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?')
    .pluck()
    .all(afterSeq, upTo, limit);
  for (const store of new Set(scope)) seqs.push(...storeSeqs.all(store, afterSeq, upTo, limit));
  if (seqs.length === 0) return { rows: [], upTo };
  seqs.sort((a, b) => a - b);
  if (seqs.length > limit) seqs.length = limit;
  const rows = db.statement<FeedRow>('SELECT * FROM price_feed WHERE seq IN (SELECT value FROM json_each(?)) ORDER BY seq').all(JSON.stringify(seqs));
  return { rows, upTo };
}

/** The rows of `readScopedPage`. */
export function readScopedFeed(db: StateDb, scope: StoreScope, afterSeq: number, limit: number = FEED_PAGE_DEFAULT): FeedRow[] {
  return readScopedPage(db, scope, afterSeq, limit).rows;
}

/** The rows with `afterSeq` < seq <= `upToSeq`, oldest first (what one commit, or a few, appended). */
export function readFeedRange(db: StateDb, afterSeq: number, upToSeq: number): FeedRow[] {
  return db.statement<FeedRow>('SELECT * FROM price_feed WHERE seq > ? AND seq <= ? ORDER BY seq').all(afterSeq, upToSeq);
}

/** How many feed rows of `scope` come after `afterSeq` (what a consumer at that offset has not read yet). */
export function countScopedFeed(db: StateDb, scope: StoreScope, afterSeq: number): number {
  if (scope === '*') return db.statement<number>('SELECT count(*) FROM price_feed WHERE seq > ?').pluck().get(afterSeq) ?? 0;
  const count = db.statement<number>('SELECT count(*) FROM price_feed WHERE store_id IS ? AND seq > ?').pluck();
  return db.read(() => [null, ...new Set(scope)].reduce((sum: number, store) => sum + (count.get(store, afterSeq) ?? 0), 0));
}

function checkPage(afterSeq: number, limit: number): void {
  if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) {
    throw new StoreError('INVALID_ARGUMENT', `afterSeq must be a non-negative integer, got ${afterSeq}`);
  }
  if (!Number.isInteger(limit) || limit < 1 || limit > FEED_PAGE_MAX) {
    throw new StoreError('INVALID_ARGUMENT', `limit must be 1..${FEED_PAGE_MAX}, got ${limit}`);
  }
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
  return writeOffset(db, consumer, seq, options.force === true ? 'move' : 'refuse');
}

/**
 * Moves `consumer`'s offset forward to `seq` (the feed API's `PUT /feed/v1/offset`): a `seq` below the stored offset
 * leaves it where it is, and the offset as stored is returned either way. A late or repeated request can never
 * move a consumer back.
 * @throws StoreError SEQ_BEYOND_FEED, INVALID_ARGUMENT.
 */
export function advanceConsumer(db: StateDb, consumer: string, seq: number): ConsumerOffset {
  return writeOffset(db, consumer, seq, 'keep');
}

/** The offset of `consumer`, undefined when it never recorded one. */
export function consumerOffset(db: StateDb, consumer: string): number | undefined {
  return db.statement<number>('SELECT last_seq FROM consumer_offsets WHERE consumer = ?').pluck().get(consumer);
}

/** What a seq below the stored offset does: refuse (OFFSET_BACKWARDS), move back anyway, or keep the offset. */
type Backwards = 'refuse' | 'move' | 'keep';

function writeOffset(db: StateDb, consumer: string, seq: number, backwards: Backwards): ConsumerOffset {
  if (consumer.trim().length === 0) throw new StoreError('INVALID_ARGUMENT', 'consumer name is empty');
  if (!Number.isSafeInteger(seq) || seq < 0) {
    throw new StoreError('INVALID_ARGUMENT', `seq must be a non-negative integer, got ${seq}`);
  }
  return db.write(() => {
    const max = maxSeq(db);
    if (seq > max) throw new StoreError('SEQ_BEYOND_FEED', `seq ${seq} is beyond the last seq of the feed (${max})`);
    const current = db
      .statement<{ last_seq: number; updated_at: string }>('SELECT last_seq, updated_at FROM consumer_offsets WHERE consumer = ?')
      .get(consumer);
    if (current !== undefined && seq < current.last_seq) {
      if (backwards === 'keep') return { consumer, last_seq: current.last_seq, updated_at: current.updated_at, lag: max - current.last_seq };
      if (backwards === 'refuse') {
        throw new StoreError('OFFSET_BACKWARDS', `${consumer} is at ${current.last_seq}; moving back to ${seq} needs --force`);
      }
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
