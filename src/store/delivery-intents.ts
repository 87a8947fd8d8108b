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
export function recordDeliveryIntent(db: StateDb, intent: NewDeliveryIntent): DeliveryIntent {
  return db.write(() => insertDeliveryIntent(db, intent));
}

/**
 * The insert of `recordDeliveryIntent`, inside a transaction the caller holds: storeDeliveredPage records the next
 * page's intent in the transaction that stores the current page (one commit per page instead of two).
 */
export function insertDeliveryIntent(db: StateDb, intent: NewDeliveryIntent): DeliveryIntent {
  const job = intent.job ?? DEFAULT_PULL_JOB;
  const filters = ApprovedPriceFilters.parse(intent.filters);
  const pending = pendingDeliveryIntent(db, job);
  if (pending) {
    throw new StoreError('INTENT_PENDING', `pull job ${job} has a pending delivery ${pending.request_id}: replay it`);
  }
  const row = db
    .statement<IntentRow>(
      `INSERT INTO delivery_intents (job, request_id, filters, cursor, page_limit, status, created_at)
       VALUES (?, ?, ?, ?, ?, 'pending', ?) RETURNING ${INTENT_COLUMNS}`,
    )
    .get(job, intent.requestId, JSON.stringify(filters), intent.cursor, intent.limit ?? null, db.now());
  if (!row) throw new Error('INSERT ... RETURNING returned no row');
  return toIntent(row);
}

/** The intent to replay after a crash (same request_id, filters, cursor and limit), or undefined. */
export function pendingDeliveryIntent(db: StateDb, job: string = DEFAULT_PULL_JOB): DeliveryIntent | undefined {
  const row = db
    .statement<IntentRow>(`SELECT ${INTENT_COLUMNS} FROM delivery_intents WHERE job = ? AND status = 'pending'`)
    .get(job);
  return row && toIntent(row);
}

/** The checkpointed cursor of a pull job: the next_cursor of the last stored page (null: start or end). */
export function pullCursor(db: StateDb, job: string = DEFAULT_PULL_JOB): string | null {
  const row = db.statement<{ cursor: string | null }>('SELECT cursor FROM pull_state WHERE job = ?').get(job);
  return row?.cursor ?? null;
}

/**
 * Gives up on a pending intent whose replay the server refuses (e.g. a 422 for a request_id it no longer knows),
 * so that the job can record a new one. The cursor stays where it is. Use only when the replay cannot succeed:
 * versions the server handed out under that request_id were not stored, and the agent relies on the platform
 * delivering versions it never saw acknowledged again.
 * @throws StoreError INTENT_NOT_PENDING.
 */
export function abandonDeliveryIntent(db: StateDb, intentId: number): void {
  db.write(() => {
    requirePendingIntent(db, intentId);
    db.statement(`UPDATE delivery_intents SET status = 'abandoned', done_at = ? WHERE id = ?`).run(db.now(), intentId);
  });
}

/** Loads an intent that must still be pending; for the page transaction. */
export function requirePendingIntent(db: StateDb, intentId: number): DeliveryIntent {
  const row = db.statement<IntentRow>(`SELECT ${INTENT_COLUMNS} FROM delivery_intents WHERE id = ?`).get(intentId);
  if (!row || row.status !== 'pending') {
    const state = row ? `already ${row.status}` : 'unknown';
    throw new StoreError('INTENT_NOT_PENDING', `delivery intent ${intentId} is ${state}`);
  }
  return toIntent(row);
}

/**
 * Marks the intent done and moves the job's cursor to `nextCursor`. Must run inside the transaction that stored
 * the page's rows: the cursor moves only together with the rows it stands for, so after a crash either both are
 * there or neither is (and the pending intent is replayed).
 */
export function completeDeliveryIntent(
  db: StateDb,
  intent: DeliveryIntent,
  nextCursor: string | null,
  rowCount: number,
): void {
  const now = db.now();
  db.statement(`UPDATE delivery_intents SET status = 'done', done_at = ?, next_cursor = ?, row_count = ? WHERE id = ?`)
    .run(now, nextCursor, rowCount, intent.id);
  db.statement(
    `INSERT INTO pull_state (job, cursor, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (job) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at`,
  ).run(intent.job, nextCursor, now);
}

function toIntent(row: IntentRow): DeliveryIntent {
  return { ...row, filters: ApprovedPriceFilters.parse(JSON.parse(row.filters)) };
}
