/**
 * Consuming the change feed, as a POS does: rows with seq greater than the last one processed, in seq order, and
 * the offsets of named consumers. The feed is append-only and seq order is commit order (appendFeedRows in
 * approved-prices.ts), so paging by `seq > last` never skips or repeats a row, however the reads
 * interleave with the agent's writes.
 *
 * Consumer offsets: `last_seq` = the highest seq the consumer (a POS, an export, a person with the CLI) has
 * finished with; it resumes with `seq > last_seq`. An offset past the end of the feed would make the consumer skip
 * rows appended later, so it is refused (here and, for POS systems writing with SQL, by a trigger). Moving an
 * offset backwards replays rows: only on purpose (`force`). An offset is the consumer's own bookkeeping
 * (WriteOptions.owner 'consumer'): under HA the standby stores it too (docs/ha.md).
 */
import type { Selectable } from 'kysely';
import { StoreError } from './errors.ts';
import type { PriceFeedTable } from './schema.ts';
import { sqlOf, type Queryable, type SqlParams } from './sql-db.ts';
import type { StateDb } from './state-db.ts';

export type FeedRow = Selectable<PriceFeedTable>;

export const FEED_PAGE_DEFAULT = 1000;
export const FEED_PAGE_MAX = 10_000;

/** Up to `limit` feed rows with seq > `afterSeq`, oldest first. */
export async function readFeed(db: StateDb, afterSeq: number, limit: number = FEED_PAGE_DEFAULT): Promise<FeedRow[]> {
  checkPage(afterSeq, limit);
  return sqlOf(db).all<FeedRow>('SELECT * FROM price_feed WHERE seq > ? ORDER BY seq LIMIT ?', [afterSeq, limit]);
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
export async function readScopedPage(db: StateDb, scope: StoreScope, afterSeq: number, limit: number = FEED_PAGE_DEFAULT): Promise<ScopedPage> {
  checkPage(afterSeq, limit);
  const sql = sqlOf(db);
  const upTo = await maxSeqOf(sql);
  if (scope === '*') {
    const rows = await sql.all<FeedRow>('SELECT * FROM price_feed WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?', [afterSeq, upTo, limit]);
    return { rows, upTo };
  }
  if (scope.length > PER_STORE_READS_MAX) {
    // Not through the store index (Dialect.notIndexed), so that the database walks seq order and stops at `limit`.
    const store = sql.dialect.notIndexed('store_id');
    const among = sql.dialect.inList(store, [...scope], 'text');
    const rows = await sql.all<FeedRow>(
      `SELECT * FROM price_feed WHERE seq > ? AND seq <= ? AND (${store} IS NULL OR ${among.sql}) ORDER BY seq LIMIT ?`,
      [afterSeq, upTo, among.param, limit],
    );
    return { rows, upTo };
  }
  const seqsOf = async (text: string, params: SqlParams): Promise<number[]> =>
    (await sql.all<{ seq: number }>(text, params)).map((r) => r.seq);
  const seqs = await seqsOf('SELECT seq FROM price_feed WHERE store_id IS NULL AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?', [afterSeq, upTo, limit]);
  for (const store of new Set(scope)) {
    seqs.push(...(await seqsOf('SELECT seq FROM price_feed WHERE store_id = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?', [store, afterSeq, upTo, limit])));
  }
  if (seqs.length === 0) return { rows: [], upTo };
  seqs.sort((a, b) => a - b);
  if (seqs.length > limit) seqs.length = limit;
  const among = sql.dialect.inList('seq', seqs);
  const rows = await sql.all<FeedRow>(`SELECT * FROM price_feed WHERE ${among.sql} ORDER BY seq`, [among.param]);
  return { rows, upTo };
}

/** The rows of `readScopedPage`. */
export async function readScopedFeed(db: StateDb, scope: StoreScope, afterSeq: number, limit: number = FEED_PAGE_DEFAULT): Promise<FeedRow[]> {
  return (await readScopedPage(db, scope, afterSeq, limit)).rows;
}

/** The rows with `afterSeq` < seq <= `upToSeq`, oldest first (what one commit, or a few, appended). */
export async function readFeedRange(db: StateDb, afterSeq: number, upToSeq: number): Promise<FeedRow[]> {
  return sqlOf(db).all<FeedRow>('SELECT * FROM price_feed WHERE seq > ? AND seq <= ? ORDER BY seq', [afterSeq, upToSeq]);
}

/** The stores (null: product-level rows) with rows in (afterSeq, upToSeq]. */
export async function feedStoresBetween(db: StateDb, afterSeq: number, upToSeq: number): Promise<(string | null)[]> {
  const rows = await sqlOf(db).all<{ store_id: string | null }>('SELECT DISTINCT store_id FROM price_feed WHERE seq > ? AND seq <= ?', [afterSeq, upToSeq]);
  return rows.map((r) => r.store_id);
}

/** Whether the feed has a row of store `storeId` (price_feed_store index). */
export async function feedHasStore(db: StateDb, storeId: string): Promise<boolean> {
  return (await sqlOf(db).value<number>('SELECT 1 FROM price_feed WHERE store_id = ? LIMIT 1', [storeId])) !== undefined;
}

/** How many feed rows of `scope` come after `afterSeq` (what a consumer at that offset has not read yet). */
export async function countScopedFeed(db: StateDb, scope: StoreScope, afterSeq: number): Promise<number> {
  const sql = sqlOf(db);
  if (scope === '*') return (await sql.value<number>('SELECT count(*) FROM price_feed WHERE seq > ?', [afterSeq])) ?? 0;
  return sql.read(async (q) => {
    let sum = 0;
    for (const store of [null, ...new Set(scope)]) {
      sum += (await q.value<number>('SELECT count(*) FROM price_feed WHERE store_id IS NOT DISTINCT FROM ? AND seq > ?', [store, afterSeq])) ?? 0;
    }
    return sum;
  });
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
export async function maxSeq(db: StateDb): Promise<number> {
  return maxSeqOf(sqlOf(db));
}

async function maxSeqOf(q: Queryable): Promise<number> {
  return (await q.value<number>('SELECT coalesce(max(seq), 0) FROM price_feed')) ?? 0;
}

/** The newest withdrawals (cancelled prices), newest first. */
export async function lastWithdrawals(db: StateDb, limit: number): Promise<FeedRow[]> {
  return sqlOf(db).all<FeedRow>(`SELECT * FROM price_feed WHERE kind = 'withdrawal' ORDER BY seq DESC LIMIT ?`, [limit]);
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
export async function ackConsumer(db: StateDb, consumer: string, seq: number, options: AckOptions = {}): Promise<ConsumerOffset> {
  return writeOffset(db, consumer, seq, options.force === true ? 'move' : 'refuse');
}

/**
 * Moves `consumer`'s offset forward to `seq` (the feed API's `PUT /feed/v1/offset`): a `seq` below the stored offset
 * leaves it where it is, and the offset as stored is returned either way. A late or repeated request can never
 * move a consumer back.
 * @throws StoreError SEQ_BEYOND_FEED, INVALID_ARGUMENT.
 */
export async function advanceConsumer(db: StateDb, consumer: string, seq: number): Promise<ConsumerOffset> {
  return writeOffset(db, consumer, seq, 'keep');
}

/** The offset of `consumer`, undefined when it never recorded one. */
export async function consumerOffset(db: StateDb, consumer: string): Promise<number | undefined> {
  return sqlOf(db).value<number>('SELECT last_seq FROM consumer_offsets WHERE consumer = ?', [consumer]);
}

/** What a seq below the stored offset does: refuse (OFFSET_BACKWARDS), move back anyway, or keep the offset. */
type Backwards = 'refuse' | 'move' | 'keep';

async function writeOffset(db: StateDb, consumer: string, seq: number, backwards: Backwards): Promise<ConsumerOffset> {
  if (consumer.trim().length === 0) throw new StoreError('INVALID_ARGUMENT', 'consumer name is empty');
  if (!Number.isSafeInteger(seq) || seq < 0) {
    throw new StoreError('INVALID_ARGUMENT', `seq must be a non-negative integer, got ${seq}`);
  }
  return sqlOf(db).write(async (tx) => {
    const max = await maxSeqOf(tx);
    if (seq > max) throw new StoreError('SEQ_BEYOND_FEED', `seq ${seq} is beyond the last seq of the feed (${max})`);
    const current = await tx.get<{ last_seq: number; updated_at: string }>(
      'SELECT last_seq, updated_at FROM consumer_offsets WHERE consumer = ?',
      [consumer],
    );
    if (current !== undefined && seq < current.last_seq) {
      if (backwards === 'keep') return { consumer, last_seq: current.last_seq, updated_at: current.updated_at, lag: max - current.last_seq };
      if (backwards === 'refuse') {
        throw new StoreError('OFFSET_BACKWARDS', `${consumer} is at ${current.last_seq}; moving back to ${seq} needs --force`);
      }
    }
    // Unless moved back on purpose, the offset moves only forward, also against a transaction committing the same
    // consumer's offset meanwhile (another request, another node of an HA pair): the row as it is then decides.
    const changed = await tx.run(
      `INSERT INTO consumer_offsets (consumer, last_seq, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (consumer) DO UPDATE SET last_seq = excluded.last_seq, updated_at = excluded.updated_at
       WHERE ? = 1 OR consumer_offsets.last_seq <= excluded.last_seq`,
      [consumer, seq, tx.now, backwards === 'move' ? 1 : 0],
    );
    if (changed === 0) {
      const stored = await tx.get<{ last_seq: number; updated_at: string }>('SELECT last_seq, updated_at FROM consumer_offsets WHERE consumer = ?', [consumer]);
      if (stored !== undefined) return { consumer, last_seq: stored.last_seq, updated_at: stored.updated_at, lag: max - stored.last_seq };
    }
    return { consumer, last_seq: seq, updated_at: tx.now, lag: max - seq };
  }, { owner: 'consumer' });
}

/** Every consumer with its lag, the most behind first. */
export async function listConsumers(db: StateDb): Promise<ConsumerOffset[]> {
  return sqlOf(db).all<ConsumerOffset>(
    `SELECT consumer, last_seq, updated_at, (SELECT coalesce(max(seq), 0) FROM price_feed) - last_seq AS lag
     FROM consumer_offsets ORDER BY last_seq, consumer`,
  );
}
