/**
 * The acknowledgement state of delivered versions: which ids still have to be acknowledged to the platform, and
 * what became of each one. Writes only the ack columns of approved_prices (ack_status, conflict_reason, acked_at).
 *
 * Order of events, and what survives a crash: a version is stored (ack_status 'pending') before it is acknowledged,
 * so an acknowledged price is always in the outbox. If the agent dies between the platform's success response and
 * `markAcknowledged`, the ids are still 'pending' here and are sent again; the platform then reports them as already
 * acknowledged (409), and the pull records them with `markAcknowledged`, not as conflicts. Only ids in 'pending'
 * change state, so no id is marked twice.
 */
import { ACK_BATCH_MAX } from '../api/schemas/index.ts';
import { StoreError } from './errors.ts';
import type { StateDb } from './state-db.ts';

export interface AckConflict {
  id: number;
  /** What happened, as found in the history read: 'cancelled', 'superseded', 'unknown', ... */
  reason: string;
}

/** Up to `limit` (1..500) ids that were delivered and not yet acknowledged, oldest id first. */
export function idsToAcknowledge(db: StateDb, limit: number = ACK_BATCH_MAX): number[] {
  if (!Number.isInteger(limit) || limit < 1 || limit > ACK_BATCH_MAX) {
    throw new StoreError('INVALID_ARGUMENT', `limit must be 1..${ACK_BATCH_MAX}, got ${limit}`);
  }
  return db
    .statement<number>(`SELECT id FROM approved_prices WHERE ack_status = 'pending' ORDER BY id LIMIT ?`)
    .pluck()
    .all(limit);
}

/**
 * Records ids the platform accepted (or reported as already acknowledged). Ids not in 'pending' are left alone.
 *
 * Committed with relaxed durability (synchronous=NORMAL): a process crash loses nothing (WAL), and a power cut can
 * only lose the last marks, whose ids are then sent again and reported as already acknowledged, so the loss costs a
 * request, never a price or a second acknowledgement. One statement for the batch: the marks rewrite whole rows,
 * and this runs once per batch of 500 on the pull's hot path.
 * @returns how many ids changed from 'pending' to 'acknowledged'.
 */
export function markAcknowledged(db: StateDb, ids: readonly number[]): number {
  if (ids.length === 0) return 0;
  const update = db.statement(
    `UPDATE approved_prices SET ack_status = 'acknowledged', acked_at = ?
     WHERE id IN (SELECT value FROM json_each(?)) AND ack_status = 'pending'`,
  );
  return db.write(() => update.run(db.now(), JSON.stringify(ids)).changes, { durability: 'relaxed' });
}

/**
 * Records ids that conflict with the platform's export state and will not be acknowledged, with the reason found.
 * What the conflict means for the outbox (a withdrawal, an amendment) is recorded separately, by storing what the
 * history read returned (`recordWithdrawal`, the next deliveries page).
 * @returns how many ids changed from 'pending' to 'conflict'.
 */
export function markConflicts(db: StateDb, conflicts: readonly AckConflict[]): number {
  const update = db.statement(
    `UPDATE approved_prices SET ack_status = 'conflict', conflict_reason = ?, acked_at = ?
     WHERE id = ? AND ack_status = 'pending'`,
  );
  return db.write(() => {
    const now = db.now();
    let changed = 0;
    for (const { id, reason } of conflicts) {
      if (reason.length === 0) throw new StoreError('INVALID_ARGUMENT', `conflict of ${id} needs a reason`);
      changed += update.run(reason, now, id).changes;
    }
    return changed;
  });
}
