/**
 * Closing the loop: per feed consumer and store, how far it has read (its offset), what the store confirmed it
 * applied, how many rows it has not applied and for how long, when the consumer was last seen, and which stores are
 * past the apply deadline. One function, `feedOverview`, for every place that shows it: `status` (text and
 * `--json` `feed`), `pricing-agent outbox consumers`, the metrics, the deadline warnings, the web console.
 *
 * Definitions (docs/feed.md):
 * - a store's rows are its own feed rows and every product-level row; `applied_seq` is the highest seq the store
 *   confirmed (null: never); `lag_rows` counts its rows after it; `lag_seconds` is the age of the oldest of them
 *   (0 when none);
 * - a row is overdue when it is not applied, its effective_date is today or earlier (or it has none: in force from
 *   its approval), and it was stored longer than `feed.apply_deadline` ago. "Today" is the agent's local date.
 * - a consumer of "*" stores is accountable for every store that has a row in the feed (and any it confirmed).
 */
import { localDate } from '../clock.ts';
import { type FeedConfig, parseDuration } from '../config/feed-schema.ts';
import { consumerOffset } from '../store/price-feed.ts';
import { feedStoreIds, hasFeedTables, lastSeenByConsumer, listApplied, type RowSpan, rowsAfter } from '../store/feed-consumers.ts';
import type { StateDb } from '../store/state-db.ts';

export interface FeedStoreStatus {
  store_id: string;
  applied_seq: number | null;
  lag_rows: number;
  lag_seconds: number;
}

export interface FeedConsumerStatus {
  name: string;
  offset: number | null;
  last_seen: string | null;
  stores: FeedStoreStatus[];
}

/** A store with prices due and not applied past the deadline. */
export interface OverdueStore {
  consumer: string;
  store_id: string;
  /** Rows past the deadline. */
  rows: number;
  /** When the oldest of them was stored. */
  oldest_recorded_at: string;
}

export interface FeedOverview {
  /** `feed.listen` as configured, as a URL (`https://0.0.0.0:9465`); null: the listener is off. */
  listen: string | null;
  apply_deadline: string;
  consumers: FeedConsumerStatus[];
  overdue: OverdueStore[];
}

/** Cache of product-level spans per applied seq: most stores share a few values (0, or the end of the feed). */
type SpanMemo = Map<string, RowSpan>;

export async function feedOverview(db: StateDb, feed: Pick<FeedConfig, 'listen' | 'tls' | 'apply_deadline' | 'consumers'>, nowMs: number): Promise<FeedOverview> {
  const listen = feed.listen === null ? null : `${feed.tls === null ? 'http' : 'https'}://${feed.listen}`;
  const overview: FeedOverview = { listen, apply_deadline: feed.apply_deadline, consumers: [], overdue: [] };
  if (feed.consumers.length === 0) return overview;
  const tables = await hasFeedTables(db);
  const applied = new Map<string, Map<string, number>>();
  for (const row of tables ? await listApplied(db) : []) {
    let stores = applied.get(row.consumer);
    if (!stores) applied.set(row.consumer, (stores = new Map<string, number>()));
    stores.set(row.store_id, row.applied_seq);
  }
  const seen = tables ? await lastSeenByConsumer(db) : new Map<string, string>();
  const deadlineMs = parseDuration(feed.apply_deadline) ?? 0;
  const due = { recordedBy: new Date(nowMs - deadlineMs).toISOString(), effectiveBy: localDate(nowMs) };
  const memo: { lag: SpanMemo; due: SpanMemo } = { lag: new Map(), due: new Map() };
  let everyStore: string[] | null = null;

  // Statement by statement, not in one snapshot: a row committed meanwhile shows as one more row of lag at most.
  for (const consumer of feed.consumers) {
    const confirmed = applied.get(consumer.name) ?? new Map<string, number>();
    let stores: string[];
    if (consumer.stores === '*') {
      everyStore ??= await feedStoreIds(db);
      stores = [...new Set([...everyStore, ...confirmed.keys()])].sort();
    } else {
      stores = [...consumer.stores];
    }
    const status: FeedConsumerStatus = {
      name: consumer.name,
      offset: (await consumerOffset(db, consumer.name)) ?? null,
      last_seen: seen.get(consumer.name) ?? null,
      stores: [],
    };
    for (const storeId of stores) {
      const appliedSeq = confirmed.get(storeId) ?? null;
      const after = appliedSeq ?? 0;
      const lag = combine(await rowsAfter(db, storeId, after), await productLevel(db, memo.lag, after));
      status.stores.push({
        store_id: storeId,
        applied_seq: appliedSeq,
        lag_rows: lag.rows,
        lag_seconds: lag.oldest_recorded_at === null ? 0 : Math.max(0, Math.floor((nowMs - Date.parse(lag.oldest_recorded_at)) / 1000)),
      });
      if (lag.rows === 0 || lag.oldest_recorded_at === null || lag.oldest_recorded_at > due.recordedBy) continue;
      const late = combine(await rowsAfter(db, storeId, after, due), await productLevel(db, memo.due, after, due));
      if (late.rows > 0 && late.oldest_recorded_at !== null) {
        overview.overdue.push({ consumer: consumer.name, store_id: storeId, rows: late.rows, oldest_recorded_at: late.oldest_recorded_at });
      }
    }
    overview.consumers.push(status);
  }
  return overview;
}

async function productLevel(db: StateDb, memo: SpanMemo, after: number, due?: { recordedBy: string; effectiveBy: string }): Promise<RowSpan> {
  const key = String(after);
  let span = memo.get(key);
  if (!span) memo.set(key, (span = await rowsAfter(db, null, after, due)));
  return span;
}

function combine(a: RowSpan, b: RowSpan): RowSpan {
  const oldest = a.oldest_recorded_at === null ? b.oldest_recorded_at : b.oldest_recorded_at === null ? a.oldest_recorded_at : a.oldest_recorded_at < b.oldest_recorded_at ? a.oldest_recorded_at : b.oldest_recorded_at;
  return { rows: a.rows + b.rows, oldest_recorded_at: oldest };
}
