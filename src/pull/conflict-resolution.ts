/**
 * What the agent records for an id the platform refused to acknowledge (409), after reading it back from the
 * history:
 * - already acknowledged (the 409 says so, or the history shows an export_status past 'exported_api'): marked
 *   'acknowledged' without being sent again, as the platform has it, even when it was cancelled since (an
 *   acknowledgement whose answer was lost, then a cancellation: found by the chaos run against the terse dialect,
 *   whose 409 gives no reason); a withdrawal row too when the history shows it cancelled;
 * - cancelled (cancelled_at set) and not acknowledged: a 'withdrawal' row in the feed (once per id) and status
 *   'conflict' (approval_acks);
 * - superseded by an amendment: status 'conflict'; the amendment is a new version that arrives by the deliveries
 *   and supersedes this one in current_prices through its predecessor_id;
 * - anything else: status 'conflict' with the reason ('unknown' when neither the body nor the history explains
 *   the refusal). Such ids are never sent again; `pricing-agent outbox stats` counts them.
 *
 * Each record is its own transaction and each is idempotent (only 'pending' ids change; a withdrawal is appended
 * once per id), so a crash in the middle leaves ids 'pending' that the next run sends and resolves again.
 */
import type { ApprovedPrice } from '../api/schemas/index.ts';
import { markAcknowledged, markConflicts } from '../store/acknowledgements.ts';
import { hasStoredSuccessor, recordWithdrawal } from '../store/approved-prices.ts';
import type { AckStats } from './acknowledge.ts';
import { findSuccessor, readVersions, type HistoryFilters } from './history-read.ts';
import type { PullDeps } from './pull-deps.ts';
import type { StoredPages } from './stored-pages.ts';

export interface ResolveContext {
  readonly deps: PullDeps;
  /** The pull's filters: they narrow the history windows. */
  readonly filters: HistoryFilters;
  readonly stats: AckStats;
  /** The deliveries lane of the same run, while it may still store pages (a pull run; absent elsewhere). */
  readonly pages?: StoredPages;
}

export interface RefusedId {
  id: number;
  /** The reason the 409 body gave, or null when it listed none. */
  reason: string | null;
}

/** export_status values that mean "still waiting for an acknowledgement"; any other value means acknowledged. */
const NOT_ACKNOWLEDGED = new Set(['pending', 'exported_api']);

/** export_status beyond pending and exported_api (its full value set is not shown); absent: not known to be. */
export function isAcknowledgedStatus(exportStatus: string | null | undefined): boolean {
  return exportStatus != null && !NOT_ACKNOWLEDGED.has(exportStatus);
}

/** Records every refused id; reads the history for all of them but those the body calls already acknowledged. */
export async function resolveConflicts(
  ctx: ResolveContext,
  refused: readonly RefusedId[],
  signal?: AbortSignal,
): Promise<void> {
  const lookUp = refused.filter((r) => r.reason !== 'already_acknowledged').map((r) => r.id);
  const versions = lookUp.length > 0 ? await readVersions(ctx.deps, lookUp, ctx.filters, ctx.stats, signal) : new Map<number, ApprovedPrice>();
  for (const one of refused) await resolveOne(ctx, one, versions.get(one.id), signal);
}

/**
 * Before splitting a refused batch whose 409 lists no ids: records the ids the history shows as cancelled or
 * already acknowledged, and those superseded by an amendment the agent has stored (the deliveries of this run come
 * before its acknowledgements, so an amendment made before the run is stored by now), and returns them. The
 * others look acknowledgeable and are sent again.
 */
export async function classifyFromHistory(
  ctx: ResolveContext,
  ids: readonly number[],
  signal?: AbortSignal,
): Promise<Set<number>> {
  const versions = await readVersions(ctx.deps, ids, ctx.filters, ctx.stats, signal);
  const decided = new Set<number>();
  for (const id of ids) {
    const version = versions.get(id);
    if (version && isAcknowledgedStatus(version.export_status)) await alreadyAcknowledged(ctx, id, version);
    else if (version?.cancelled_at) await withdraw(ctx, version);
    else if (await hasStoredSuccessor(ctx.deps.db, id)) await conflict(ctx, id, 'superseded');
    else continue;
    decided.add(id);
  }
  return decided;
}

async function resolveOne(
  ctx: ResolveContext,
  refused: RefusedId,
  version: ApprovedPrice | undefined,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (refused.reason === 'already_acknowledged' || (version && isAcknowledgedStatus(version.export_status))) {
    await alreadyAcknowledged(ctx, refused.id, version);
    return;
  }
  if (version?.cancelled_at) {
    await withdraw(ctx, version);
    return;
  }
  let reason = refused.reason;
  if (reason === null) {
    const superseded =
      (await hasStoredSuccessor(ctx.deps.db, refused.id)) ||
      (version !== undefined && (await findSuccessor(ctx.deps, version, ctx.stats, signal)) !== undefined);
    reason = superseded ? 'superseded' : 'unknown';
  }
  if (reason === 'cancelled') {
    // The history shows no cancelled_at yet: the withdrawal follows from the reconciliation once it does.
    ctx.deps.logger.warn({ approval_id: refused.id }, 'refused as cancelled, but the history shows no cancellation');
  }
  await conflict(ctx, refused.id, reason);
}

async function withdraw(ctx: ResolveContext, version: ApprovedPrice): Promise<void> {
  await feedWithdrawal(ctx, version);
  await conflict(ctx, version.id, 'cancelled');
}

async function feedWithdrawal(ctx: ResolveContext, version: ApprovedPrice): Promise<void> {
  const seq = await recordWithdrawal(ctx.deps.db, version);
  if (seq !== null) ctx.stats.withdrawals += 1;
}

/** `version`: as the history shows it, when it was read (its cancellation, if any, goes to the feed). */
async function alreadyAcknowledged(ctx: ResolveContext, id: number, version?: ApprovedPrice): Promise<void> {
  ctx.stats.alreadyAcknowledged += await markAcknowledged(ctx.deps.db, [id]);
  if (version?.cancelled_at) await feedWithdrawal(ctx, version);
}

async function conflict(ctx: ResolveContext, id: number, reason: string): Promise<void> {
  const changed = await markConflicts(ctx.deps.db, [{ id, reason }]);
  if (changed > 0) ctx.stats.conflicts[reason] = (ctx.stats.conflicts[reason] ?? 0) + changed;
  ctx.deps.logger.debug({ approval_id: id, reason }, 'approval not acknowledged');
}
