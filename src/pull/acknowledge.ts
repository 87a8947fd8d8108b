/**
 * Acknowledging stored versions to the platform, in batches of at most 500, and resolving 409 conflicts.
 *
 * Rules:
 * - Only ids committed to the outbox are sent ('pending' in approval_acks, a row committed with the version), so an
 *   acknowledged price is always in the outbox.
 * - An id that succeeded is marked 'acknowledged' at once and never sent again. A 409 refuses the whole batch; the
 *   conflicting ids are taken from the body when it lists them, otherwise found by binary splitting, in which a
 *   half that succeeds is marked and only the refused half is split further.
 * - A conflicting id is read back from the history and recorded (conflict-resolution.ts): cancelled (withdrawal
 *   in the feed), superseded by an amendment, or already acknowledged (marked, not sent again).
 *
 * What survives a crash: if the agent dies after the platform accepted a batch but before `markAcknowledged`
 * committed, the ids are still 'pending' here. The next run sends them again, the platform refuses them as already
 * acknowledged, and they are marked without a second acknowledgement.
 */
import { ackConflictsOf } from '../api/resources/approved-prices.ts';
import { ApiError, API_ERROR_CODES } from '../api/errors.ts';
import { ACK_BATCH_MAX } from '../api/schemas/index.ts';
import { countPending, idsToAcknowledge, markAcknowledged } from '../store/acknowledgements.ts';
import { classifyFromHistory, resolveConflicts, type ResolveContext } from './conflict-resolution.ts';
import { checkAborted } from './pull-deps.ts';
import type { StoredPages } from './stored-pages.ts';

export interface AckStats {
  /** Acknowledge requests sent. */
  requests: number;
  /** Ids the platform accepted. */
  acknowledged: number;
  /** Ids the platform had acknowledged already (an earlier run's batch whose answer was lost). */
  alreadyAcknowledged: number;
  /** Ids not acknowledged, by reason (cancelled, superseded, unknown). */
  conflicts: Record<string, number>;
  /** Withdrawals appended to the feed for cancelled versions. */
  withdrawals: number;
  historyPages: number;
}

export function emptyAckStats(): AckStats {
  return { requests: 0, acknowledged: 0, alreadyAcknowledged: 0, conflicts: {}, withdrawals: 0, historyPages: 0 };
}

/**
 * Acknowledges every stored, unacknowledged version, oldest id first. With `pages` (a run whose deliveries are
 * still coming in), it sends only full batches of 500 until the deliveries lane has finished, then the rest.
 */
export async function acknowledgeStored(ctx: ResolveContext, signal?: AbortSignal, pages?: StoredPages): Promise<void> {
  for (;;) {
    checkAborted(signal);
    const ids = await idsToAcknowledge(ctx.deps.db, ACK_BATCH_MAX);
    if (pages && !pages.finished && ids.length < ACK_BATCH_MAX) {
      await pages.next();
      continue;
    }
    if (ids.length === 0) return;
    await acknowledgeBatch(ctx, ids, false, signal);
    // Every id of the batch leaves 'pending' (acknowledged or conflict) unless the platform answered 200 without
    // listing some of them. Sending those again at once would loop; the next run tries them again.
    if ((await countPending(ctx.deps.db, ids)) === ids.length) {
      ctx.deps.logger.warn({ ids: ids.length }, 'acknowledge accepted none of the batch; leaving it for the next run');
      return;
    }
  }
}

/**
 * Sends one batch; on 409 finds and records the conflicting ids and sends the rest. `classified`: the history of
 * these ids was read already in this batch (do not read it again before splitting).
 */
async function acknowledgeBatch(
  ctx: ResolveContext,
  ids: readonly number[],
  classified: boolean,
  signal: AbortSignal | undefined,
): Promise<void> {
  checkAborted(signal);
  let conflict: ApiError;
  try {
    ctx.stats.requests += 1;
    const result = await ctx.deps.client.approvedPrices.acknowledge(ids, { signal });
    const sent = new Set(ids);
    const accepted = result.acknowledged.filter((id) => sent.has(id));
    ctx.stats.acknowledged += await markAcknowledged(ctx.deps.db, accepted);
    return;
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== API_ERROR_CODES.conflict) throw error;
    conflict = error;
  }

  const listed = ackConflictsOf(conflict);
  if (listed !== null) {
    const inBatch = new Set(ids);
    const conflicts = listed.filter((c) => inBatch.has(c.id));
    if (conflicts.length === 0) throw conflictWithoutIds(conflict, ids.length);
    await resolveConflicts(ctx, conflicts, signal);
    const refused = new Set(conflicts.map((c) => c.id));
    const rest = ids.filter((id) => !refused.has(id));
    if (rest.length > 0) await acknowledgeBatch(ctx, rest, false, signal);
    return;
  }

  // The body does not say which ids conflict.
  if (ids.length === 1) {
    await resolveConflicts(ctx, [{ id: ids[0] ?? 0, reason: null }], signal);
    return;
  }
  if (!classified) {
    // The history usually explains a refusal (cancelled, already acknowledged) for many ids at once, e.g. a whole
    // batch acknowledged by a run that died before recording it: one window read instead of 2n requests.
    const decided = await classifyFromHistory(ctx, ids, signal);
    if (decided.size > 0) {
      const rest = ids.filter((id) => !decided.has(id));
      if (rest.length > 0) await acknowledgeBatch(ctx, rest, true, signal);
      return;
    }
  }
  const middle = Math.ceil(ids.length / 2);
  await acknowledgeBatch(ctx, ids.slice(0, middle), true, signal);
  await acknowledgeBatch(ctx, ids.slice(middle), true, signal);
}

function conflictWithoutIds(error: ApiError, size: number): Error {
  return new Error(`acknowledge was refused (409) naming none of the ${size} ids sent: ${error.message}`, {
    cause: error,
  });
}
