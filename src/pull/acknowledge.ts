/**
 * Acknowledging stored versions to the platform, in batches of at most 500, and resolving refusals.
 *
 * Rules:
 * - Only ids committed to the outbox are sent ('pending' in approval_acks, a row committed with the version), so an
 *   acknowledged price is always in the outbox.
 * - The call is judged by its status code, not its body (the success body is not shown in the document): any 2xx
 *   acknowledges every id sent, and they are marked 'acknowledged' at once and never sent again. What the body says
 *   per id is used only for the run's counts, when it says it in a form the agent recognizes (ackDetailOf).
 * - A 409 refuses the whole batch; the conflicting ids are taken from the body when it names them (ackConflictsOf),
 *   otherwise found by binary splitting, in which a half that succeeds is marked and only the refused half is split
 *   further. A conflicting id is read back from the history and recorded (conflict-resolution.ts): cancelled
 *   (withdrawal in the feed), superseded by an amendment, or already acknowledged (marked, not sent again).
 * - Any other 4xx but 401, 403 and 429 (a 422 naming ids, a 404, a 400...) is about some ids of the batch: the ids
 *   the body names, or those found by splitting, are parked with the refusal as the reason, and the rest are sent
 *   again. Parked ids never block later ones; `pull --retry-parked` sends them again once the cause is fixed.
 *   401 (the key) and 403 (the key's rights) are about every id alike: the batch stays pending and the run fails
 *   visibly. 5xx and transport errors were retried by the client already; the batch stays pending.
 *
 * What survives a crash: if the agent dies after the platform accepted a batch but before `markAcknowledged`
 * committed, the ids are still 'pending' here. The next run sends them again; the platform refuses them as already
 * acknowledged (409: marked without a second acknowledgement) or takes them again without effect.
 */
import { ackConflictsOf, ackDetailOf, ackRefusalOf, type AckResponse } from '../api/resources/approved-prices.ts';
import { ApiError, API_ERROR_CODES } from '../api/errors.ts';
import { ACK_BATCH_MAX } from '../api/schemas/index.ts';
import { countPending, idsToAcknowledge, markAcknowledged, markParked } from '../store/acknowledgements.ts';
import { sendAcknowledge } from './ack-body.ts';
import { classifyFromHistory, resolveConflicts, type ResolveContext } from './conflict-resolution.ts';
import { checkAborted } from './pull-deps.ts';

export interface AckStats {
  /** Acknowledge requests sent. */
  requests: number;
  /** Ids the platform accepted. */
  acknowledged: number;
  /** Ids the platform had acknowledged already (an earlier run's batch whose answer was lost). */
  alreadyAcknowledged: number;
  /** Ids not acknowledged, by reason (cancelled, superseded, unknown). */
  conflicts: Record<string, number>;
  /** Ids set aside because the platform refused them with a 4xx other than 409/429. */
  parked: number;
  /** Withdrawals appended to the feed for cancelled versions. */
  withdrawals: number;
  historyPages: number;
}

export function emptyAckStats(): AckStats {
  return { requests: 0, acknowledged: 0, alreadyAcknowledged: 0, conflicts: {}, parked: 0, withdrawals: 0, historyPages: 0 };
}

/**
 * Acknowledges every stored, unacknowledged version, oldest id first. With `pages` (a run whose deliveries are
 * still coming in), it sends only full batches of 500 until the deliveries lane has finished, then the rest.
 */
export async function acknowledgeStored(ctx: ResolveContext, signal?: AbortSignal): Promise<void> {
  const pages = ctx.pages;
  // While deliveries come in, each batch is looked for above the last one sent (a cheaper scan: idsToAcknowledge).
  // An id below it that is still pending (a later page delivered an older version) is not lost: once the
  // deliveries lane has ended, the search starts from the lowest id again.
  let after: number | null = null;
  for (;;) {
    checkAborted(signal);
    const live = pages !== undefined && !pages.finished;
    const seen = pages?.count ?? 0;
    const ids = await idsToAcknowledge(ctx.deps.db, ACK_BATCH_MAX, live ? after : null);
    if (live && ids.length < ACK_BATCH_MAX) {
      await pages.next(seen);
      continue;
    }
    if (ids.length === 0) return;
    await acknowledgeBatch(ctx, ids, false, signal);
    // Every id of the batch leaves 'pending' (acknowledged, conflict or parked). Guard against a loop should one not.
    if ((await countPending(ctx.deps.db, ids)) === ids.length) {
      ctx.deps.logger.warn({ ids: ids.length }, 'acknowledge settled none of the batch; leaving it for the next run');
      return;
    }
    after = ids.at(-1) ?? after;
  }
}

/**
 * Sends one batch; on a refusal finds and records the refused ids and sends the rest. `classified`: the history of
 * these ids was read already in this batch (do not read it again before splitting).
 */
async function acknowledgeBatch(
  ctx: ResolveContext,
  ids: readonly number[],
  classified: boolean,
  signal: AbortSignal | undefined,
): Promise<void> {
  checkAborted(signal);
  let refusal: ApiError;
  try {
    ctx.stats.requests += 1;
    await accepted(ctx, ids, await sendAcknowledge(ctx.deps, ids, signal));
    return;
  } catch (error) {
    // A body no reading of which the server takes (ack-body.ts) refuses every id alike: not parked.
    if (!(error instanceof ApiError) || !refusesIds(error) || ackRefusalOf(error).kind === 'shape') throw error;
    refusal = error;
  }
  if (refusal.code === API_ERROR_CODES.conflict) await conflicted(ctx, ids, refusal, classified, signal);
  else await refused(ctx, ids, refusal, signal);
}

/** A 2xx: every id sent is acknowledged; the body's per-id detail only splits the count. */
async function accepted(ctx: ResolveContext, ids: readonly number[], response: AckResponse): Promise<void> {
  const marked = await markAcknowledged(ctx.deps.db, ids);
  const detail = ackDetailOf(response.body, ids);
  const repeated = detail.changed !== null ? ids.length - detail.changed.length : (detail.repeatedCount ?? 0);
  const already = Math.min(repeated, marked);
  ctx.stats.acknowledged += marked - already;
  ctx.stats.alreadyAcknowledged += already;
}

/** A refusal about some ids of the batch: 409, or a 4xx other than 401, 403 and 429. */
function refusesIds(error: ApiError): boolean {
  const status = error.status ?? 0;
  return status >= 400 && status < 500 && status !== 401 && status !== 403 && status !== 429;
}

async function conflicted(
  ctx: ResolveContext,
  ids: readonly number[],
  conflict: ApiError,
  classified: boolean,
  signal: AbortSignal | undefined,
): Promise<void> {
  const listed = ackConflictsOf(conflict);
  const inBatch = new Set(ids);
  const named = listed?.filter((c) => inBatch.has(c.id)) ?? [];
  if (named.length > 0) {
    await resolveConflicts(ctx, named, signal);
    const refused = new Set(named.map((c) => c.id));
    const rest = ids.filter((id) => !refused.has(id));
    if (rest.length > 0) await acknowledgeBatch(ctx, rest, false, signal);
    return;
  }
  // The body does not say which ids conflict (or names none of the batch).
  if (ids.length === 1) {
    await resolveConflicts(ctx, [{ id: ids[0] ?? 0, reason: null }], signal);
    return;
  }
  // An id superseded by an amendment is known as such only once the amendment is stored: a look at the history
  // while the deliveries lane still stores pages is not the last word on these ids.
  const pages = ctx.pages;
  if (!classified) {
    // The history usually explains a refusal (cancelled, already acknowledged) for many ids at once, e.g. a whole
    // batch acknowledged by a run that died before recording it: one window read instead of 2n requests.
    const final = pages === undefined || pages.finished;
    const decided = await classifyFromHistory(ctx, ids, signal);
    if (decided.size > 0) {
      const rest = ids.filter((id) => !decided.has(id));
      if (rest.length > 0) await acknowledgeBatch(ctx, rest, final, signal);
      return;
    }
  }
  // Before splitting the batch request by request, wait for the pages and look once more (the lanes interleave
  // differently under load: a pull took 68 to 130 requests where about 20 do with every page in).
  if (pages !== undefined && !pages.finished) {
    while (!pages.finished) await pages.next(pages.count);
    await conflicted(ctx, ids, conflict, false, signal);
    return;
  }
  await split(ctx, ids, signal);
}

/** A 4xx other than 409: park the ids it names, or the single id, or split to find them. */
async function refused(ctx: ResolveContext, ids: readonly number[], error: ApiError, signal: AbortSignal | undefined): Promise<void> {
  const reason = `refused with ${error.status ?? '4xx'}: ${error.message}`;
  const named = namedIds(error, ids);
  if (named.length > 0 || ids.length === 1) {
    const parked = named.length > 0 ? named : ids;
    await park(ctx, parked, reason);
    const set = new Set(parked);
    const rest = ids.filter((id) => !set.has(id));
    if (rest.length > 0) await acknowledgeBatch(ctx, rest, false, signal);
    return;
  }
  await split(ctx, ids, signal);
}

/** The ids a 422 names by their position in the body that was sent. */
function namedIds(error: ApiError, ids: readonly number[]): number[] {
  const refusal = ackRefusalOf(error);
  if (refusal.kind !== 'ids') return [];
  return refusal.positions.flatMap((p) => (ids[p] === undefined ? [] : [ids[p]]));
}

async function park(ctx: ResolveContext, ids: readonly number[], reason: string): Promise<void> {
  const parked = await markParked(ctx.deps.db, ids, reason);
  ctx.stats.parked += parked;
  ctx.deps.logger.warn({ ids: ids.length, reason }, 'acknowledge refused for these ids: parked (pricing-agent pull --retry-parked sends them again)');
}

async function split(ctx: ResolveContext, ids: readonly number[], signal: AbortSignal | undefined): Promise<void> {
  const middle = Math.ceil(ids.length / 2);
  await acknowledgeBatch(ctx, ids.slice(0, middle), true, signal);
  await acknowledgeBatch(ctx, ids.slice(middle), true, signal);
}
