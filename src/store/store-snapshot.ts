/**
 * One store's snapshot for a new till (the feed's `GET /feed/v1/current`): the prices in force on a date, those that
 * take effect later, and the feed seq the till continues from with `/changes`. A large store holds hundreds of
 * thousands of prices: read in one query they held the event loop for the whole query (better-sqlite3 is
 * synchronous) and every row in memory at once. So the snapshot is read in pages, each a short read of its own.
 *
 * Pages by key: the rows are ordered by item_id, and a page is the item range (after, upTo], where `upTo` is the
 * item of the SNAPSHOT_PAGE_VERSIONS-th version (of any store) after `after` in the approved_prices_item_store index.
 * A page thus reads at most that many versions plus the other versions of its last item, whatever the store; a store
 * with few prices among many gets small pages, never a large one. Each page is one separate statement (a keyset
 * range, no OFFSET over rows already read): no read transaction or open iterator spans pages, because on SQLite the
 * agent has one connection and anything held open across pages would make every other request and the pull's
 * commits wait for the till reading slowly. Between pages the reader gives the event loop a turn (setImmediate).
 * Both backends push the item range into the current-prices query's window (item_id is one of its PARTITION BY
 * columns), so a page reads the index range only (EXPLAIN on SQLite 3.54 and PostgreSQL 15).
 *
 * Consistency without one transaction: `seq`, the feed's last seq, is read FIRST, before any page. seq order is
 * commit order (appendFeedRows), so every change committed after that read has a larger seq and reaches the till
 * through `/changes?after=seq`, whichever page it lands beside: a change to an item already paged comes only through
 * the feed; a change to an item not yet paged comes in its page and again through the feed, which the till applies
 * idempotently (a version is keyed by its approval_id; an amendment replaces its predecessor; a withdrawal removes
 * its version). A row can be seen twice, never missed. Reading `seq` after the pages instead would lose every change
 * committed meanwhile to an item already paged.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { type CurrentPrice, requireIsoDate } from './approved-prices.ts';
import { StoreError } from './errors.ts';
import { maxSeq } from './price-feed.ts';
import { PRODUCT_LEVEL_STORE_KEY } from './schema.ts';
import { sqlOf, type SqlDb } from './sql-db.ts';
import type { StateDb } from './state-db.ts';

/**
 * Versions read per page (any store's, plus the rest of the page's last item): the bound on one read's rows and on
 * the time it holds the event loop. Not configurable: it bounds the work of one read, not what a till receives.
 */
export const SNAPSHOT_PAGE_VERSIONS = 1000;

export interface StoreSnapshot {
  /** Every feed row up to this seq is reflected; a reader continues with the feed after it. */
  readonly seq: number;
  /** The prices in force on the date (the store's own and the product-level ones), by item and store key. */
  current(): AsyncGenerator<CurrentPrice[]>;
  /** Versions that take effect after the date and are neither cancelled nor replaced, by item, store key, date. */
  upcoming(): AsyncGenerator<CurrentPrice[]>;
}

export interface SnapshotOptions {
  /** Versions per page (tests use small pages); 2 to SNAPSHOT_PAGE_VERSIONS. */
  readonly pageVersions?: number;
}

/**
 * What one store needs to start from scratch (a new till, a reset): its prices in force on `date`, the ones that
 * take effect later, and the feed seq they reflect. A reader that applies these and then the feed rows after `seq`
 * holds what it would hold had it read the whole feed. Product-level prices are included (their store_id is null);
 * which of an item's two prices wins is the reader's rule (docs/outbox.md).
 *
 * `seq` is read now; the pages are read as `current()` and `upcoming()` are iterated (each once), see the header for
 * why that is consistent. A reader that stops iterating reads no further page.
 *
 * `upcoming` uses the rule of currentPricesSelect (migration 0002): a version counts unless it is cancelled or named
 * as predecessor by another version; its date is effective_date (a version without one is in force from its
 * approval, so never upcoming).
 */
export async function openStoreSnapshot(db: StateDb, storeId: string, date: string, options: SnapshotOptions = {}): Promise<StoreSnapshot> {
  requireIsoDate(date);
  const pageVersions = options.pageVersions ?? SNAPSHOT_PAGE_VERSIONS;
  if (!Number.isInteger(pageVersions) || pageVersions < 2 || pageVersions > SNAPSHOT_PAGE_VERSIONS) {
    throw new StoreError('INVALID_ARGUMENT', `pageVersions must be 2..${SNAPSHOT_PAGE_VERSIONS}, got ${pageVersions}`);
  }
  const sql = sqlOf(db);
  const seq = await maxSeq(db); // first: the lower bound every later page is at or after (header)
  const select = sql.dialect.currentPricesSelect('?');
  return {
    seq,
    current: () =>
      pages(sql, pageVersions, (range) =>
        sql.all<CurrentPrice>(
          `SELECT * FROM (${select}) AS current_prices
           WHERE (store_id = ? OR store_id IS NULL) AND ${range.sql} ORDER BY item_id, store_key`,
          [date, storeId, ...range.params],
        ),
      ),
    upcoming: () =>
      pages(sql, pageVersions, (range) =>
        sql.all<CurrentPrice>(
          `SELECT item_id, store_id, coalesce(store_id, '${PRODUCT_LEVEL_STORE_KEY}') AS store_key, sku, approved_price,
             currency_code, effective_date, id AS approval_id, predecessor_id, approved_at
           FROM approved_prices a
           WHERE (a.store_id = ? OR a.store_id IS NULL) AND a.cancelled_at IS NULL
             AND NOT EXISTS (SELECT 1 FROM approved_prices s WHERE s.predecessor_id = a.id)
             AND a.effective_date > ? AND ${range.sql}
           ORDER BY item_id, store_key, effective_date, approved_at, id`,
          [storeId, date, ...range.params],
        ),
      ),
  };
}

/** An item range of one page: `item_id` in (after, upTo], or up to `upTo` for the first page. */
interface ItemRange {
  readonly sql: string;
  readonly params: readonly string[];
}

/**
 * The pages of `read` in item order: each a range of items holding about `pageVersions` versions, read when the
 * consumer asks for it, after a turn of the event loop. Empty pages are skipped; the last page ends at the last item.
 */
async function* pages<R>(sql: SqlDb, pageVersions: number, read: (range: ItemRange) => Promise<R[]>): AsyncGenerator<R[]> {
  let after: string | null = null;
  for (;;) {
    if (after !== null) await nextTurn();
    const from: string = after === null ? '' : 'item_id > ? AND ';
    const fromParams: string[] = after === null ? [] : [after];
    // The item of the pageVersions-th version from here, or the last item when fewer are left.
    const upTo: string | null | undefined =
      (await sql.value<string>(`SELECT item_id FROM approved_prices WHERE ${from}item_id IS NOT NULL ORDER BY item_id LIMIT 1 OFFSET ?`, [...fromParams, pageVersions - 1])) ??
      (await sql.value<string | null>(`SELECT max(item_id) FROM approved_prices WHERE ${from}item_id IS NOT NULL`, fromParams));
    if (upTo === undefined || upTo === null) return;
    const rows = await read({ sql: `${from}item_id <= ?`, params: [...fromParams, upTo] });
    if (rows.length > 0) yield rows;
    after = upTo;
  }
}
