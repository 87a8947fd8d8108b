/**
 * The acknowledgement state of delivered versions: which ids still have to be acknowledged to the platform, and
 * what became of each one. Owner of approval_acks (migration 0004_ack_state), one narrow row per delivered
 * version, kept out of approved_prices so that a status change rewrites ~40 bytes instead of a ~2 KB record row.
 * A version learned only from a history read has no row: there is nothing to acknowledge.
 *
 * Order of events, and what survives a crash: a version's 'pending' row is inserted in the transaction that stores
 * the version (`recordPending`, called by storeDeliveredPage), so an id is handed out for acknowledgement only once
 * it is committed, and an acknowledged price is always in the outbox. If the agent dies between the platform's
 * success response and `markAcknowledged`, the ids are still 'pending' here and are sent again; the platform then
 * reports them as already acknowledged (409), and the pull records them with `markAcknowledged`, not as conflicts.
 * Only ids in 'pending' change state, so no id is marked twice.
 */
import { ACK_BATCH_MAX } from '../api/schemas/index.ts';
import { StoreError } from './errors.ts';
import type { AckStatus } from './schema.ts';
import { sqlOf, type Queryable } from './sql-db.ts';
import type { StateDb } from './state-db.ts';

export interface AckConflict {
  id: number;
  /** What happened, as found in the history read: 'cancelled', 'superseded', 'unknown', ... */
  reason: string;
}

/** The acknowledgement state of one version; undefined when it was never delivered (or is unknown). */
export interface AckState {
  status: AckStatus;
  conflict_reason: string | null;
  acked_at: string | null;
}

/**
 * Records `ids` (versions just stored by a deliveries page) as waiting for acknowledgement. Runs inside the caller's
 * write transaction, the one that stores the versions: the 'pending' rows commit with them or not at all. An id
 * that already has a row keeps it (its state never goes back to 'pending'). One statement for the page.
 */
export async function recordPending(tx: Queryable, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.insert(
    { table: 'approval_acks', columns: ['approval_id', 'status'], onConflict: { target: ['approval_id'] } },
    ids.map((id) => [id, 'pending']),
  );
}

export async function getAckState(db: StateDb, id: number): Promise<AckState | undefined> {
  return sqlOf(db).get<AckState>('SELECT status, conflict_reason, acked_at FROM approval_acks WHERE approval_id = ?', [id]);
}

/** How many of `ids` are still 'pending'. */
export async function countPending(db: StateDb, ids: readonly number[]): Promise<number> {
  const sql = sqlOf(db);
  const among = sql.dialect.inList('approval_id', ids);
  return (await sql.value<number>(`SELECT count(*) FROM approval_acks WHERE ${among.sql} AND status = 'pending'`, [among.param])) ?? 0;
}

/**
 * Up to `limit` (1..500) ids that were delivered and not yet acknowledged, oldest id first; with `after`, only ids
 * above it. On PostgreSQL the bound matters: the index of pending ids keeps the entries of ids acknowledged since its
 * last cleanup, and a scan from the lowest id walked them all (2.4 ms a call in a 97,000-row pull, 0.1 ms once
 * cleaned up); a scan from `after` starts past them.
 */
export async function idsToAcknowledge(db: StateDb, limit: number = ACK_BATCH_MAX, after: number | null = null): Promise<number[]> {
  if (!Number.isInteger(limit) || limit < 1 || limit > ACK_BATCH_MAX) {
    throw new StoreError('INVALID_ARGUMENT', `limit must be 1..${ACK_BATCH_MAX}, got ${limit}`);
  }
  const above = after === null ? '' : 'AND approval_id > ?';
  const rows = await sqlOf(db).all<{ approval_id: number }>(
    `SELECT approval_id FROM approval_acks WHERE status = 'pending' ${above} ORDER BY approval_id LIMIT ?`,
    after === null ? [limit] : [after, limit],
  );
  return rows.map((r) => r.approval_id);
}

/**
 * Records ids the platform accepted (or reported as already acknowledged). Ids not in 'pending' are left alone.
 *
 * Committed with relaxed durability (SQLite synchronous=NORMAL, PostgreSQL synchronous_commit off): a process crash
 * loses nothing, and a power cut can only lose the last marks, whose ids are then sent again and reported as already
 * acknowledged, so the loss costs a request, never a price or a second acknowledgement. One statement for the batch,
 * with the COMMIT right behind it: this runs once per batch of 500 on the pull's hot path.
 * @returns how many ids changed from 'pending' to 'acknowledged'.
 */
export async function markAcknowledged(db: StateDb, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const sql = sqlOf(db);
  const among = sql.dialect.inList('approval_id', ids);
  return sql.write(
    (tx) =>
      tx.commitBehind(
        tx.run(`UPDATE approval_acks SET status = 'acknowledged', acked_at = ? WHERE ${among.sql} AND status = 'pending'`, [tx.now, among.param]),
      ),
    { durability: 'relaxed' },
  );
}

/**
 * Sets aside ids the platform refused with a 4xx other than 409/429 (found by splitting the batch), with the
 * refusal as the reason: they are not sent again, so they never block the ids after them, and stay visible
 * (`outbox stats`, `status`) until `unparkAll` gives them another try.
 * @returns how many ids changed from 'pending' to 'parked'.
 */
export async function markParked(db: StateDb, ids: readonly number[], reason: string): Promise<number> {
  if (ids.length === 0) return 0;
  if (reason.length === 0) throw new StoreError('INVALID_ARGUMENT', 'a parked id needs a reason');
  const sql = sqlOf(db);
  const among = sql.dialect.inList('approval_id', ids);
  return sql.write((tx) =>
    tx.run(`UPDATE approval_acks SET status = 'parked', conflict_reason = ?, acked_at = ? WHERE ${among.sql} AND status = 'pending'`, [
      reason.slice(0, 500),
      tx.now,
      among.param,
    ]),
  );
}

/** Why ids are parked, the most frequent reasons first. */
export async function parkedReasons(db: StateDb, limit: number): Promise<{ reason: string; n: number }[]> {
  return sqlOf(db).all<{ reason: string; n: number }>(
    `SELECT conflict_reason AS reason, count(*) AS n FROM approval_acks WHERE status = 'parked'
     GROUP BY conflict_reason ORDER BY n DESC, reason LIMIT ?`,
    [limit],
  );
}

/** Puts every parked id back to 'pending' (`pull --retry-parked`). @returns how many. */
export async function unparkAll(db: StateDb): Promise<number> {
  return sqlOf(db).write((tx) =>
    tx.run(`UPDATE approval_acks SET status = 'pending', conflict_reason = NULL, acked_at = NULL WHERE status = 'parked'`),
  );
}

/**
 * Records ids that conflict with the platform's export state and will not be acknowledged, with the reason found.
 * What the conflict means for the outbox (a withdrawal, an amendment) is recorded separately, by storing what the
 * history read returned (`recordWithdrawal`, the next deliveries page).
 * @returns how many ids changed from 'pending' to 'conflict'.
 */
export async function markConflicts(db: StateDb, conflicts: readonly AckConflict[]): Promise<number> {
  for (const { id, reason } of conflicts) {
    if (reason.length === 0) throw new StoreError('INVALID_ARGUMENT', `conflict of ${id} needs a reason`);
  }
  return sqlOf(db).write(async (tx) => {
    let changed = 0;
    for (const { id, reason } of conflicts) {
      changed += await tx.run(
        `UPDATE approval_acks SET status = 'conflict', conflict_reason = ?, acked_at = ? WHERE approval_id = ? AND status = 'pending'`,
        [reason, tx.now, id],
      );
    }
    return changed;
  });
}

/** How many delivered versions have `status`. */
export async function countAckStatus(db: StateDb, status: AckStatus): Promise<number> {
  return (await sqlOf(db).value<number>(`SELECT count(*) FROM approval_acks WHERE status = ?`, [status])) ?? 0;
}
