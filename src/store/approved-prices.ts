/**
 * Approved prices into the outbox: every version by id, each new version (or withdrawal) appended to the feed once,
 * and the prices those versions put in force on a date.
 *
 * Owner of approved_prices rows and of price_feed (the acknowledgement state is in approval_acks, owned by
 * acknowledgements.ts; a page's 'pending' rows are inserted here through `recordPending`). Each exported write is one
 * SQLite transaction.
 *
 * Versions: a row with `predecessor_id` is an amendment and supersedes its predecessor (current_prices skips any
 * version that another row names as predecessor); a row with `cancelled_at` withdraws its price. Both are derived
 * from the stored rows, so they hold whatever order the versions arrive in.
 */
import type { Selectable } from 'kysely';
import type { ApprovedPrice } from '../api/schemas/index.ts';
import { recordPending } from './acknowledgements.ts';
import {
  completeDeliveryIntent,
  type DeliveryIntent,
  insertDeliveryIntent,
  type NewDeliveryIntent,
  requirePendingIntent,
} from './delivery-intents.ts';
import { StoreError } from './errors.ts';
import { announceFeed } from './feed-changes.ts';
import { currentPricesSelect, PRODUCT_LEVEL_STORE_KEY } from './migrations/0002-pull-outbox.ts';
import type { ApprovedPricesTable, CurrentPricesView, FeedKind } from './schema.ts';
import type { StateDb } from './state-db.ts';

export type StoredApprovedPrice = Selectable<ApprovedPricesTable>;
export type CurrentPrice = Selectable<CurrentPricesView>;

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

export interface StoredPage {
  /** Versions stored for the first time. */
  inserted: number;
  /** Their ids, in page order. */
  insertedIds: number[];
  /** Versions already stored (a replayed page, or a version seen before): not stored or fed again. */
  duplicates: number;
  /** Feed rows appended ('price' and 'withdrawal'). */
  feedRows: number;
  /** Highest seq appended, or null when nothing was. */
  lastSeq: number | null;
  /** The next page's intent, when `next` was given and the listing goes on: committed with this page. */
  nextIntent?: DeliveryIntent;
}

/**
 * Stores one deliveries page in ONE transaction: every version into approved_prices (by id; one already there is
 * left as it is), a 'pending' approval_acks row for each new version (from then on it is handed out for
 * acknowledgement), a 'price' feed row for each new version, a 'withdrawal' feed row (once per id) for each
 * cancelled one, the job's cursor moved to `nextCursor`, the intent marked done.
 *
 * Checkpoint rule: the cursor moves only here, in the transaction that commits the rows it stands for. If the
 * process dies before the commit, nothing of the page is stored (and none of its ids is to be acknowledged), the
 * intent is still pending, and its replay delivers the same page; a replayed page that did commit adds no row and
 * no feed row.
 *
 * With `next` (and a non-null `nextCursor`), the intent of the following page, at `nextCursor`, is recorded in the
 * same transaction: it is durable before its request is sent, at the cost of one commit instead of two.
 *
 * @throws StoreError INTENT_NOT_PENDING when the intent is unknown or already done (nothing is written).
 */
export function storeDeliveredPage(
  db: StateDb,
  intentId: number,
  items: readonly ApprovedPrice[],
  nextCursor: string | null,
  next?: Omit<NewDeliveryIntent, 'cursor'>,
): StoredPage {
  const stored = db.write(() => {
    const intent = requirePendingIntent(db, intentId);
    const receivedAt = db.now();
    const page: StoredPage = { inserted: 0, insertedIds: [], duplicates: 0, feedRows: 0, lastSeq: null };
    const newIds = page.insertedIds;
    for (const item of items) {
      const inserted = insertVersion(db, item, intent.id, receivedAt);
      if (inserted) {
        page.inserted += 1;
        newIds.push(item.id);
      } else page.duplicates += 1;
      let seq: number | null = null;
      if (item.cancelled_at) seq = withdraw(db, item, item.cancelled_at, receivedAt);
      else if (inserted) seq = appendFeedRow(db, 'price', item, receivedAt); // a new id has no feed row yet
      if (seq !== null) {
        page.feedRows += 1;
        page.lastSeq = seq;
      }
    }
    recordPending(db, newIds); // only versions this page stored: a version stored before keeps its state
    completeDeliveryIntent(db, intent, nextCursor, items.length);
    if (next && nextCursor !== null) {
      page.nextIntent = insertDeliveryIntent(db, { ...next, job: intent.job, cursor: nextCursor });
    }
    return page;
  });
  if (stored.lastSeq !== null) announceFeed(db, stored.lastSeq); // committed: waiting feed readers may look
  return stored;
}

/**
 * Records that `approval` (a version read back, e.g. with history=true) is cancelled: sets cancelled_at on the
 * stored version (storing it first, without an approval_acks row, if the agent never received it: nothing to
 * acknowledge) and appends one 'withdrawal' feed row for its id, unless one was appended before.
 *
 * @returns the seq appended, or null when the withdrawal was already in the feed.
 * @throws StoreError NOT_CANCELLED when `approval.cancelled_at` is not set.
 */
export function recordWithdrawal(db: StateDb, approval: ApprovedPrice): number | null {
  const cancelledAt = approval.cancelled_at;
  if (!cancelledAt) throw new StoreError('NOT_CANCELLED', `approval ${approval.id} has no cancelled_at`);
  const seq = db.write(() => {
    const now = db.now();
    insertVersion(db, approval, null, now);
    return withdraw(db, approval, cancelledAt, now);
  });
  if (seq !== null) announceFeed(db, seq);
  return seq;
}

/** One stored version, or undefined. */
export function getApprovedPrice(db: StateDb, id: number): StoredApprovedPrice | undefined {
  return db.statement<StoredApprovedPrice>('SELECT * FROM approved_prices WHERE id = ?').get(id);
}

/**
 * The prices in force on `date` (YYYY-MM-DD): one row per (item_id, store_id), ordered by item and store key.
 * The `current_prices` view uses the reading process's local date (`date('now', 'localtime')`), which tests cannot
 * move; this runs the very same SQL text (currentPricesSelect) with the date bound: for tests, the CLI, and POS
 * integrations that need another day (e.g. tomorrow's shelf labels).
 */
export function currentPricesAt(db: StateDb, date: string): CurrentPrice[] {
  if (!ISO_DATE.test(date)) throw new StoreError('INVALID_ARGUMENT', `date must be YYYY-MM-DD, got ${date}`);
  return db
    .statement<CurrentPrice>(`SELECT * FROM (${currentPricesSelect('?')}) ORDER BY item_id, store_key`)
    .all(date);
}

export interface StoreSnapshot {
  /** Every feed row up to this seq is reflected; a reader continues with the feed after it. */
  seq: number;
  /** The prices in force on the date (the store's own and the product-level ones), by item and store key. */
  current: CurrentPrice[];
  /** Versions that take effect after the date and are neither cancelled nor replaced, by item, store key, date. */
  upcoming: CurrentPrice[];
}

/**
 * What one store needs to start from scratch (a new till, a reset): its prices in force on `date`, the ones that
 * take effect later, and the feed seq they reflect, read in one snapshot. A reader that applies these and then the
 * feed rows after `seq` holds what it would hold had it read the whole feed. Product-level prices are included (their
 * store_id is null); which of an item's two prices wins is the reader's rule (docs/outbox.md).
 *
 * `upcoming` uses the rule of currentPricesSelect (migration 0002): a version counts unless it is cancelled or named
 * as predecessor by another version; its date is effective_date (a version without one is in force from its
 * approval, so never upcoming).
 */
export function storeSnapshot(db: StateDb, storeId: string, date: string): StoreSnapshot {
  if (!ISO_DATE.test(date)) throw new StoreError('INVALID_ARGUMENT', `date must be YYYY-MM-DD, got ${date}`);
  return db.read(() => ({
    seq: db.statement<number>('SELECT coalesce(max(seq), 0) FROM price_feed').pluck().get() ?? 0,
    current: db
      .statement<CurrentPrice>(
        `SELECT * FROM (${currentPricesSelect('?')}) WHERE store_id = ? OR store_id IS NULL ORDER BY item_id, store_key`,
      )
      .all(date, storeId),
    upcoming: db
      .statement<CurrentPrice>(
        `SELECT item_id, store_id, coalesce(store_id, '${PRODUCT_LEVEL_STORE_KEY}') AS store_key, sku, approved_price,
           currency_code, effective_date, id AS approval_id, predecessor_id, approved_at
         FROM approved_prices a
         WHERE (a.store_id = ? OR a.store_id IS NULL) AND a.item_id IS NOT NULL AND a.cancelled_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM approved_prices s WHERE s.predecessor_id = a.id)
           AND a.effective_date > ?
         ORDER BY item_id, store_key, effective_date, approved_at, id`,
      )
      .all(storeId, date),
  }));
}

/** Marks the version cancelled and appends its withdrawal once. Returns the new seq, or null if already fed. */
function withdraw(db: StateDb, version: ApprovedPrice, cancelledAt: string, now: string): number | null {
  db.statement('UPDATE approved_prices SET cancelled_at = ? WHERE id = ? AND cancelled_at IS NULL').run(
    cancelledAt,
    version.id,
  );
  if (hasFeedRow(db, version.id, 'withdrawal')) return null;
  return appendFeedRow(db, 'withdrawal', version, now);
}

/** INSERT OR IGNORE by id; true when the version is new. */
function insertVersion(
  db: StateDb,
  item: ApprovedPrice,
  intentId: number | null,
  receivedAt: string,
): boolean {
  const result = db
    .statement(
      `INSERT OR IGNORE INTO approved_prices (id, grid_id, grid_item_id, item_id, sku, store_id, current_price,
         proposed_price, approved_price, effective_date, currency_code, proposal_source, source, approved_at,
         approved_by_user_id, export_status, exported_at, cancelled_at, predecessor_id, amendment_reason,
         delivery_channel, record, intent_id, received_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      item.id,
      // Columns the outbox does not use and the document marks as always present: kept empty when a server leaves
      // them out (the record column holds what it sent).
      item.grid_id ?? '',
      item.grid_item_id ?? 0,
      item.item_id ?? null,
      item.sku ?? null,
      item.store_id ?? null,
      item.current_price ?? null,
      item.proposed_price ?? '',
      item.approved_price,
      item.effective_date ?? null,
      item.currency_code,
      item.proposal_source ?? '',
      item.source ?? '',
      item.approved_at,
      item.approved_by_user_id ?? '',
      item.export_status ?? '',
      item.exported_at ?? null,
      item.cancelled_at ?? null,
      item.predecessor_id ?? null,
      item.amendment_reason ?? null,
      item.delivery_channel ?? null,
      JSON.stringify(item),
      intentId,
      receivedAt,
    );
  return result.changes === 1;
}

/**
 * Appending to price_feed, the change feed POS systems read, inside the page or withdrawal transaction: a feed row
 * is committed together with the approved_prices row it describes.
 *
 * `seq` is allocated inside the write transaction and SQLite has one writer at a time, so seq order is commit
 * order: a reader that has seen seq N will never later find a committed row below N. At most one row per
 * (approval_id, kind): the UNIQUE constraint refuses a second one; callers check first, because an ignored insert
 * would still consume a seq and leave a gap.
 */
function appendFeedRow(db: StateDb, kind: FeedKind, source: ApprovedPrice, recordedAt: string): number {
  const result = db
    .statement(
      `INSERT INTO price_feed (kind, approval_id, predecessor_id, item_id, sku, store_id, approved_price,
         currency_code, effective_date, recorded_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      kind,
      source.id,
      source.predecessor_id ?? null,
      source.item_id ?? null,
      source.sku ?? null,
      source.store_id ?? null,
      source.approved_price,
      source.currency_code,
      source.effective_date ?? null,
      recordedAt,
    );
  return Number(result.lastInsertRowid);
}

function hasFeedRow(db: StateDb, approvalId: number, kind: FeedKind): boolean {
  return (
    db.statement('SELECT 1 FROM price_feed WHERE approval_id = ? AND kind = ?').pluck().get(approvalId, kind) !==
    undefined
  );
}
