/**
 * Delivery intents and the pull cursor: what makes a deliveries page replayable.
 *
 * Before each `POST /v1/approved_prices/deliveries` the pull records an intent (a fresh request_id, the filters, the
 * cursor, the page size) and commits it. If the agent dies after sending the request, the intent is still pending
 * at the next start: the pull sends the same request again and the server hands out the same page. The intent is
 * marked done in the same transaction that stores the page (approved-prices.ts), together with the new cursor.
 *
 * Owner of the tables delivery_intents and pull_state: nothing else writes them.
 */
import type { Selectable } from 'kysely';
import { ApprovedPriceFilters } from '../api/schemas/index.ts';
import { StoreError } from './errors.ts';
import type { DeliveryIntentsTable } from './schema.ts';
import { sqlOf, type Queryable } from './sql-db.ts';
import type { StateDb } from './state-db.ts';

/** The pull job of `pull.approved_prices`; a job name keys the cursor and the one pending intent. */
export const DEFAULT_PULL_JOB = 'approved_prices';

export type DeliveryIntent = Omit<Selectable<DeliveryIntentsTable>, 'filters'> & { filters: ApprovedPriceFilters };

export interface NewDeliveryIntent {
  /** A fresh UUID; the server replays the same page for the same request_id. */
  requestId: string;
  filters: ApprovedPriceFilters;
  /** The cursor to send: `pullCursor(db, job)` unless the pull deliberately starts over. */
  cursor: string | null;
  /** pagination.limit to send (1..500); null leaves it to the server. */
  limit?: number | null;
  job?: string;
}

type IntentRow = Selectable<DeliveryIntentsTable>;

const INTENT_COLUMNS = `id, job, request_id, filters, cursor, page_limit, status, created_at, done_at, next_cursor,
  row_count`;

/**
 * Commits a pending intent before its request is sent. Throws INTENT_PENDING when the job already has one: that one
 * must be replayed (and stored) first, or a page the server handed out could be skipped.
 */
export async function recordDeliveryIntent(db: StateDb, intent: NewDeliveryIntent): Promise<DeliveryIntent> {
  return sqlOf(db).write((tx) => insertDeliveryIntent(tx, intent));
}

/**
 * The insert of `recordDeliveryIntent`, inside a transaction the caller holds: storeDeliveredPage records the next
 * page's intent in the transaction that stores the current page (one commit per page instead of two). `afterDone`:
 * the transaction has just completed the job's pending intent (completeDeliveryIntent), so no other one is pending
 * (the unique index allows one per job, and would refuse a second anyway): not looked for, one round trip less.
 */
export async function insertDeliveryIntent(
  tx: Queryable & { now: string },
  intent: NewDeliveryIntent,
  afterDone = false,
): Promise<DeliveryIntent> {
  const job = intent.job ?? DEFAULT_PULL_JOB;
  const filters = ApprovedPriceFilters.parse(intent.filters);
  const pending = afterDone ? undefined : await pendingIntentOf(tx, job);
  if (pending) {
    throw new StoreError('INTENT_PENDING', `pull job ${job} has a pending delivery ${pending.request_id}: replay it`);
  }
  const row = await tx.get<IntentRow>(
    `INSERT INTO delivery_intents (job, request_id, filters, cursor, page_limit, status, created_at)
     VALUES (?, ?, ?, ?, ?, 'pending', ?) RETURNING ${INTENT_COLUMNS}`,
    [job, intent.requestId, JSON.stringify(filters), intent.cursor, intent.limit ?? null, tx.now],
  );
  if (!row) throw new Error('INSERT ... RETURNING returned no row');
  return toIntent(row);
}

/** The intent to replay after a crash (same request_id, filters, cursor and limit), or undefined. */
export async function pendingDeliveryIntent(db: StateDb, job: string = DEFAULT_PULL_JOB): Promise<DeliveryIntent | undefined> {
  return pendingIntentOf(sqlOf(db), job);
}

async function pendingIntentOf(q: Queryable, job: string): Promise<DeliveryIntent | undefined> {
  const row = await q.get<IntentRow>(`SELECT ${INTENT_COLUMNS} FROM delivery_intents WHERE job = ? AND status = 'pending'`, [job]);
  return row && toIntent(row);
}

/** The checkpointed cursor of a pull job: the next_cursor of the last stored page (null: start or end). */
export async function pullCursor(db: StateDb, job: string = DEFAULT_PULL_JOB): Promise<string | null> {
  const row = await sqlOf(db).get<{ cursor: string | null }>('SELECT cursor FROM pull_state WHERE job = ?', [job]);
  return row?.cursor ?? null;
}

/** The filters (JSON text) of the job's last stored page, to tell whether its cursor belongs to other filters. */
export async function lastDoneFilters(db: StateDb, job: string = DEFAULT_PULL_JOB): Promise<string | undefined> {
  return sqlOf(db).value<string>(
    `SELECT filters FROM delivery_intents WHERE job = ? AND status = 'done' ORDER BY id DESC LIMIT 1`,
    [job],
  );
}

/**
 * Gives up on a pending intent whose replay the server refuses (e.g. a 422 for a request_id it no longer knows),
 * so that the job can record a new one. The cursor stays where it is. Use only when the replay cannot succeed:
 * versions the server handed out under that request_id were not stored, and the agent relies on the platform
 * delivering versions it never saw acknowledged again.
 * @throws StoreError INTENT_NOT_PENDING.
 */
export async function abandonDeliveryIntent(db: StateDb, intentId: number): Promise<void> {
  await sqlOf(db).write(async (tx) => {
    await requirePendingIntent(tx, intentId);
    await tx.run(`UPDATE delivery_intents SET status = 'abandoned', done_at = ? WHERE id = ?`, [tx.now, intentId]);
  });
}

/** Loads an intent that must still be pending; for the page transaction. */
export async function requirePendingIntent(tx: Queryable, intentId: number): Promise<DeliveryIntent> {
  const row = await tx.get<IntentRow>(`SELECT ${INTENT_COLUMNS} FROM delivery_intents WHERE id = ?`, [intentId]);
  if (!row || row.status !== 'pending') {
    const state = row ? `already ${row.status}` : 'unknown';
    throw new StoreError('INTENT_NOT_PENDING', `delivery intent ${intentId} is ${state}`);
  }
  return toIntent(row);
}

/**
 * Marks the pending intent `intentId` done and moves its job's cursor to `nextCursor`; returns the job. Must run
 * inside the transaction that stores the page's rows: the cursor moves only together with the rows it stands for,
 * so after a crash either both are there or neither is (and the pending intent is replayed). Both statements are
 * issued before either answers (one round trip on PostgreSQL, where a page transaction pays for each): the cursor's
 * statement reads the job from the intent the first one has just marked.
 * @throws StoreError INTENT_NOT_PENDING when the intent is unknown or not pending (the caller's transaction rolls back).
 */
export async function completeDeliveryIntent(
  tx: Queryable & { now: string },
  intentId: number,
  nextCursor: string | null,
  rowCount: number,
): Promise<string> {
  const [job] = await Promise.all([
    tx.value<string>(
      `UPDATE delivery_intents SET status = 'done', done_at = ?, next_cursor = ?, row_count = ? WHERE id = ? AND status = 'pending' RETURNING job`,
      [tx.now, nextCursor, rowCount, intentId],
    ),
    tx.run(
      `INSERT INTO pull_state (job, cursor, updated_at) SELECT job, ?, ? FROM delivery_intents WHERE id = ?
       ON CONFLICT (job) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at`,
      [nextCursor, tx.now, intentId],
    ),
  ]);
  if (job === undefined) {
    await requirePendingIntent(tx, intentId); // throws, saying why
    throw new StoreError('INTENT_NOT_PENDING', `delivery intent ${intentId} is not pending`);
  }
  return job;
}

/** The job's last delivery page (any status), for status: how the last run ended. */
export async function lastDeliveryIntent(db: StateDb, job: string = DEFAULT_PULL_JOB): Promise<DeliveryIntent | undefined> {
  const row = await sqlOf(db).get<IntentRow>(`SELECT ${INTENT_COLUMNS} FROM delivery_intents WHERE job = ? ORDER BY id DESC LIMIT 1`, [job]);
  return row && toIntent(row);
}

export interface StoredPagesSummary {
  /** Pages stored between `start` and `end` (ISO instants, end exclusive), and their rows. */
  pages: number;
  rows: number;
  /** The newest stored page's time, whenever it was. */
  lastStoredAt: string | null;
  /** When the job's cursor last moved. */
  cursorUpdatedAt: string | null;
}

export async function storedPagesSummary(db: StateDb, start: string, end: string, job: string = DEFAULT_PULL_JOB): Promise<StoredPagesSummary> {
  const sql = sqlOf(db);
  const today = await sql.get<{ pages: number; rows: number | null; last_stored_at: string | null }>(
    `SELECT count(*) FILTER (WHERE done_at >= ? AND done_at < ?) AS pages,
       sum(row_count) FILTER (WHERE done_at >= ? AND done_at < ?) AS rows,
       max(done_at) AS last_stored_at
     FROM delivery_intents WHERE job = ? AND status = 'done'`,
    [start, end, start, end, job],
  );
  const cursor = await sql.value<string>('SELECT updated_at FROM pull_state WHERE job = ?', [job]);
  return {
    pages: today?.pages ?? 0,
    rows: today?.rows ?? 0,
    lastStoredAt: today?.last_stored_at ?? null,
    cursorUpdatedAt: cursor ?? null,
  };
}

function toIntent(row: IntentRow): DeliveryIntent {
  return { ...row, filters: ApprovedPriceFilters.parse(JSON.parse(row.filters)) };
}

/** How many delivery pages the job has stored, in all. */
export async function countStoredPages(db: StateDb, job: string = DEFAULT_PULL_JOB): Promise<number> {
  return (await sqlOf(db).value<number>(`SELECT count(*) FROM delivery_intents WHERE job = ? AND status = 'done'`, [job])) ?? 0;
}
