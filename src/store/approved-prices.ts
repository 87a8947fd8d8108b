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
import { feedRowsOfPage, type FeedRow } from '../feed-rows.ts';
import { recordPending } from './acknowledgements.ts';
import {
  completeDeliveryIntent,
  type DeliveryIntent,
  insertDeliveryIntent,
  type NewDeliveryIntent,
} from './delivery-intents.ts';
import { StoreError } from './errors.ts';
import { announceFeed } from './feed-changes.ts';
import { type ApprovedPricesTable, type CurrentPricesView } from './schema.ts';
import { sqlOf, type Queryable, type SqlParams, type SqlValue, type Tx } from './sql-db.ts';
import type { StateDb } from './state-db.ts';

export type StoredApprovedPrice = Selectable<ApprovedPricesTable>;
export type CurrentPrice = Selectable<CurrentPricesView>;

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** @throws StoreError INVALID_ARGUMENT unless `date` is YYYY-MM-DD. */
export function requireIsoDate(date: string): void {
  if (!ISO_DATE.test(date)) throw new StoreError('INVALID_ARGUMENT', `date must be YYYY-MM-DD, got ${date}`);
}

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
 * The page is written with a handful of statements whatever its size (versions, feed rows, acknowledgement rows
 * each in one `insert`); only cancelled versions take a statement each.
 *
 * @throws StoreError INTENT_NOT_PENDING when the intent is unknown or already done (nothing is written).
 */
export async function storeDeliveredPage(
  db: StateDb,
  intentId: number,
  items: readonly ApprovedPrice[],
  nextCursor: string | null,
  next?: Omit<NewDeliveryIntent, 'cursor'>,
): Promise<StoredPage> {
  const stored = await sqlOf(db).write(async (tx) => {
    // Two groups of statements, each issued without waiting for the answers (pipelined on PostgreSQL): what this page
    // holds, then what follows from it. The intent's statement goes first: the transaction rolls back unless pending.
    const cancelled = items.filter((item) => item.cancelled_at);
    const [job, fresh, withdrawn] = await Promise.all([
      completeDeliveryIntent(tx, intentId, nextCursor, items.length),
      insertVersions(tx, items, intentId),
      withdrawnIds(tx, cancelled.map((item) => item.id)),
    ]);
    const decided = feedRowsOfPage(items, fresh, withdrawn);
    const page: StoredPage = { inserted: decided.newIds.length, insertedIds: decided.newIds, duplicates: decided.duplicates, feedRows: 0, lastSeq: null };
    const writes = cancelled.map((item) => markCancelled(tx, item.id, item.cancelled_at as string));
    // Nothing of these answers decides the commit: COMMIT goes right behind them (a failed one still fails it).
    const [seqs, , nextIntent] = await tx.commitBehind(
      Promise.all([
        appendFeedRows(tx, decided.rows),
        recordPending(tx, decided.newIds), // only versions this page stored: a version stored before keeps its state
        next && nextCursor !== null ? insertDeliveryIntent(tx, { ...next, job, cursor: nextCursor }, true) : undefined,
        ...writes,
      ]),
    );
    page.feedRows = seqs.length;
    page.lastSeq = seqs.at(-1) ?? null;
    if (nextIntent) page.nextIntent = nextIntent;
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
export async function recordWithdrawal(db: StateDb, approval: ApprovedPrice): Promise<number | null> {
  const cancelledAt = approval.cancelled_at;
  if (!cancelledAt) throw new StoreError('NOT_CANCELLED', `approval ${approval.id} has no cancelled_at`);
  const seq = await sqlOf(db).write(async (tx) => {
    await insertVersions(tx, [approval], null);
    await markCancelled(tx, approval.id, cancelledAt);
    const [appended] = await appendFeedRows(tx, feedRowsOfPage([approval], new Set(), await withdrawnIds(tx, [approval.id])).rows);
    return appended ?? null;
  });
  if (seq !== null) announceFeed(db, seq);
  return seq;
}

/** One stored version, or undefined. */
export async function getApprovedPrice(db: StateDb, id: number): Promise<StoredApprovedPrice | undefined> {
  return sqlOf(db).get<StoredApprovedPrice>('SELECT * FROM approved_prices WHERE id = ?', [id]);
}

/** An amendment naming `id` as its predecessor is stored (approved_prices_predecessor index). */
export async function hasStoredSuccessor(db: StateDb, id: number): Promise<boolean> {
  return (await sqlOf(db).value<number>('SELECT 1 FROM approved_prices WHERE predecessor_id = ? LIMIT 1', [id])) !== undefined;
}

/** approved_at of each stored id among `ids`, ordered by id; ids never stored are left out. */
export async function storedApprovedAt(db: StateDb, ids: readonly number[]): Promise<{ id: number; approved_at: string }[]> {
  const sql = sqlOf(db);
  const among = sql.dialect.inList('id', ids);
  return sql.all(`SELECT id, approved_at FROM approved_prices WHERE ${among.sql} ORDER BY id`, [among.param]);
}

/** How many versions are stored with an id strictly between `low` and `high`. */
export async function countStoredBetween(db: StateDb, low: number, high: number): Promise<number> {
  return (await sqlOf(db).value<number>('SELECT count(*) FROM approved_prices WHERE id > ? AND id < ?', [low, high])) ?? 0;
}

/**
 * The prices in force on `date` (YYYY-MM-DD): one row per (item_id, store_id), ordered by item and store key.
 * The `current_prices` view uses the reading process's local date, which tests cannot move; this runs the very
 * same SQL text (Dialect.currentPricesSelect) with the date bound: for tests, the CLI, and POS integrations that need
 * another day (e.g. tomorrow's shelf labels).
 */
export async function currentPricesAt(db: StateDb, date: string): Promise<CurrentPrice[]> {
  requireIsoDate(date);
  const sql = sqlOf(db);
  const select = sql.dialect.currentPricesSelect('?');
  return sql.all<CurrentPrice>(`SELECT * FROM (${select}) AS current_prices ORDER BY item_id, store_key`, [date]);
}

/** Sets cancelled_at on a stored version that does not have it yet. */
async function markCancelled(tx: Queryable, id: number, cancelledAt: string): Promise<void> {
  await tx.run('UPDATE approved_prices SET cancelled_at = ? WHERE id = ? AND cancelled_at IS NULL', [cancelledAt, id]);
}

/** Which of `ids` already have their withdrawal in the feed. */
async function withdrawnIds(tx: Queryable, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const among = tx.dialect.inList('approval_id', ids);
  const rows = await tx.all<{ approval_id: number }>(`SELECT approval_id FROM price_feed WHERE kind = 'withdrawal' AND ${among.sql}`, [among.param]);
  return new Set(rows.map((r) => r.approval_id));
}

const VERSION_COLUMNS = [
  'id', 'grid_id', 'grid_item_id', 'item_id', 'sku', 'store_id', 'current_price', 'proposed_price', 'approved_price',
  'effective_date', 'currency_code', 'proposal_source', 'source', 'approved_at', 'approved_by_user_id',
  'export_status', 'exported_at', 'cancelled_at', 'predecessor_id', 'amendment_reason', 'delivery_channel', 'record',
  'intent_id', 'received_at',
] as const;

/**
 * The columns of approved_prices that show a field of `record` to POS readers, as JSON text (NULL when the field is
 * absent or null). SQLite computes them from `record` when read (VIRTUAL, migration 0002); PostgreSQL stores them
 * (plain columns since migration 0011), filled from the version the agent already holds: as STORED generated
 * columns they parsed the whole record again on every insert, a third of a deliveries page's insert.
 */
export const RECORD_FIELD_COLUMNS = ['trace', 'approval_details'] as const;

/**
 * A field of a version as the record-field columns hold it: its JSON text, null when absent or null. This is the very
 * text of the field inside `JSON.stringify(version)` (the `record` column: JSON.stringify writes a nested value as it
 * writes it alone), so it is what PostgreSQL's generated columns gave (`nullif((record::json -> field)::text,
 * 'null')`) and what SQLite's json_extract gives for an object or an array (the document's shapes of both fields).
 */
export function recordFieldText(version: Readonly<Record<string, unknown>>, field: string): string | null {
  const value = version[field];
  return value === undefined || value === null ? null : JSON.stringify(value);
}

/** The RECORD_FIELD_COLUMNS values of a stored version, from its `record` text. */
export function recordFieldsOf(record: string): SqlParams {
  const version = JSON.parse(record) as Record<string, unknown>;
  return RECORD_FIELD_COLUMNS.map((field) => recordFieldText(version, field));
}

const VERSIONS_INSERT = {
  table: 'approved_prices',
  columns: VERSION_COLUMNS,
  onConflict: { target: ['id'] },
  returning: ['id'],
} as const;

/** VERSIONS_INSERT where the record-field columns are stored (Dialect.recordFieldsStored). */
const VERSIONS_INSERT_WITH_FIELDS = { ...VERSIONS_INSERT, columns: [...VERSION_COLUMNS, ...RECORD_FIELD_COLUMNS] } as const;

/** Inserts the versions not stored yet (by id); returns the ids inserted now. */
async function insertVersions(tx: Tx, items: readonly ApprovedPrice[], intentId: number | null): Promise<Set<number>> {
  if (items.length === 0) return new Set();
  const withFields = tx.dialect.recordFieldsStored;
  const rows: SqlParams[] = items.map((item) => {
    const row: SqlValue[] = [
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
      tx.now,
    ];
    if (withFields) for (const field of RECORD_FIELD_COLUMNS) row.push(recordFieldText(item, field));
    return row;
  });
  const inserted = await tx.insert<{ id: number }>(withFields ? VERSIONS_INSERT_WITH_FIELDS : VERSIONS_INSERT, rows);
  return new Set(inserted.map((r) => r.id));
}

const FEED_INSERT = {
  table: 'price_feed',
  columns: ['kind', 'approval_id', 'predecessor_id', 'item_id', 'sku', 'store_id', 'approved_price', 'currency_code',
    'effective_date', 'recorded_at'],
  returning: ['seq'],
} as const;

/**
 * Appends to price_feed, the change feed POS systems read, inside the page or withdrawal transaction: a feed row
 * is committed together with the approved_prices row it describes. Returns the seqs, in the order of `entries`.
 *
 * Seq order is commit order, so that a reader that has seen seq N never later finds a committed row below N: the
 * backend serialises feed writers up to their commit (SQLite has one writer at a time; PostgreSQL takes a
 * transaction-level advisory lock first, see Dialect.serializeFeedWriters), and seqs are given in `entries` order.
 * At most one row per (approval_id, kind): the UNIQUE constraint refuses a second one; callers check first, because
 * a refused insert would still consume a seq and leave a gap.
 */
async function appendFeedRows(tx: Tx, entries: readonly FeedRow<ApprovedPrice>[]): Promise<number[]> {
  if (entries.length === 0) return [];
  const lock = tx.dialect.serializeFeedWriters;
  const rows: SqlParams[] = entries.map(({ kind, source }) => [
    kind,
    source.id,
    source.predecessor_id ?? null,
    source.item_id ?? null,
    source.sku ?? null,
    source.store_id ?? null,
    source.approved_price,
    source.currency_code,
    source.effective_date ?? null,
    tx.now,
  ]);
  // The lock and the insert issued together: the insert runs after the lock is granted, in the order issued.
  const [, seqs] = await Promise.all([lock === null ? undefined : tx.run(lock), tx.insert<{ seq: number }>(FEED_INSERT, rows)]);
  return seqs.map((r) => r.seq);
}

/** How many of `ids` have their withdrawal in the feed. */
export async function countWithdrawn(db: StateDb, ids: readonly number[]): Promise<number> {
  return (await withdrawnIds(sqlOf(db), ids)).size;
}

/** How many stored versions name one of `ids` as their predecessor (amendments of them). */
export async function countSuccessors(db: StateDb, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const sql = sqlOf(db);
  const among = sql.dialect.inList('predecessor_id', ids);
  return (await sql.value<number>(`SELECT count(*) FROM approved_prices WHERE ${among.sql}`, [among.param])) ?? 0;
}

/** How many of `ids` are in force today (in the current_prices view, with the reader's local date). */
export async function countCurrentAmong(db: StateDb, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const sql = sqlOf(db);
  const among = sql.dialect.inList('approval_id', ids);
  return (await sql.value<number>(`SELECT count(*) FROM current_prices WHERE ${among.sql}`, [among.param])) ?? 0;
}

/**
 * Up to `limit` acknowledged store-level versions that are still current candidates (not cancelled, not amended),
 * oldest id first: what the demo changes on the platform to show amendments and cancellations arriving.
 */
export async function acknowledgedStoreVersions(db: StateDb, limit: number): Promise<number[]> {
  const rows = await sqlOf(db).all<{ id: number }>(
    `SELECT id FROM approved_prices JOIN approval_acks ON approval_id = id
     WHERE status = 'acknowledged' AND store_id IS NOT NULL AND item_id IS NOT NULL AND cancelled_at IS NULL
       AND id NOT IN (SELECT predecessor_id FROM approved_prices WHERE predecessor_id IS NOT NULL)
     ORDER BY id LIMIT ?`,
    [limit],
  );
  return rows.map((r) => r.id);
}

/** Rows of the current_prices view (prices in force today, by the reader's local date). */
export async function countCurrentPrices(db: StateDb): Promise<number> {
  return (await sqlOf(db).value<number>('SELECT count(*) FROM current_prices')) ?? 0;
}
