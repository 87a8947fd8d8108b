/**
 * Which approved-price versions become rows of the price feed (price_feed: what tills read, in seq order), decided
 * without the database. The store applies it inside the transaction that stores a deliveries page or a withdrawal
 * (store/approved-prices.ts), with what that transaction read: which versions it stored for the first time, and
 * which ids already have their withdrawal in the feed.
 *
 * - A version stored for the first time, not cancelled: one 'price' row.
 * - A cancelled version: one 'withdrawal' row per id, ever, whether or not the version was stored before (a till
 *   must learn of a withdrawal of a price it was given), however often this page or later ones repeat it.
 * - Anything else (a version seen before, a repeat within the page): no row, so a replayed page adds nothing.
 */

export const FEED_KINDS = ['price', 'withdrawal'] as const;
export type FeedKind = (typeof FEED_KINDS)[number];

/** What the rule reads of a version. */
export interface FeedVersion {
  readonly id: number;
  readonly cancelled_at?: string | null | undefined;
}

export interface FeedRow<V extends FeedVersion> {
  readonly kind: FeedKind;
  readonly source: V;
}

export interface PageFeed<V extends FeedVersion> {
  /** The feed rows to append, in page order. */
  readonly rows: FeedRow<V>[];
  /** The ids stored for the first time, in page order, each once. */
  readonly newIds: number[];
  /** Versions of the page that were stored before (or earlier in the page). */
  readonly duplicates: number;
}

/**
 * The feed rows of one page.
 * @param stored the ids the transaction stored for the first time (each counts as new once, at its first place)
 * @param withdrawn the ids whose withdrawal is already in the feed
 */
export function feedRowsOfPage<V extends FeedVersion>(items: readonly V[], stored: ReadonlySet<number>, withdrawn: ReadonlySet<number>): PageFeed<V> {
  const fresh = new Set(stored);
  const withdrawnNow = new Set(withdrawn);
  const rows: FeedRow<V>[] = [];
  const newIds: number[] = [];
  let duplicates = 0;
  for (const item of items) {
    const isNew = fresh.delete(item.id);
    if (isNew) newIds.push(item.id);
    else duplicates += 1;
    if (item.cancelled_at) {
      if (!withdrawnNow.has(item.id)) {
        withdrawnNow.add(item.id);
        rows.push({ kind: 'withdrawal', source: item });
      }
    } else if (isNew) rows.push({ kind: 'price', source: item });
  }
  return { rows, newIds, duplicates };
}
