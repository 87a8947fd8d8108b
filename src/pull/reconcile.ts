/**
 * The history reconciliation: how a cancellation of a price the agent has already acknowledged reaches the outbox.
 *
 * The deliveries endpoint hands out only versions waiting for an acknowledgement, and a 409 reveals cancellations
 * only of versions not acknowledged yet. Once acknowledged, a version never comes again, and the history has no
 * "changed since" filter: a cancellation does not change approved_at. So, on its own schedule
 * (`pull.approved_prices.reconcile.schedule`, hourly by default), the agent reads the registered history of
 * approvals approved in the last `lookback_days` (90 by default; 0 = the whole history), newest first, and for
 * every cancelled version it has stored without a cancellation, records the withdrawal (one feed row per id).
 * Versions it never stored are skipped: a price that never reached the feed needs no withdrawal.
 *
 * Read-only on the platform (history=true). Idempotent: a second run over the same window appends nothing, so a
 * crash simply means the next run reads the window again; there is no checkpoint to lose.
 */
import type { ApprovedPrice } from '../api/schemas/index.ts';
import { getApprovedPrice, recordWithdrawal } from '../store/approved-prices.ts';
import { historyPages, type HistoryFilters } from './history-read.ts';
import { checkAborted, type PullDeps } from './pull-deps.ts';

const DAY_MS = 86_400_000;

export interface ReconcileOptions {
  /** The pull's filters (without history): the same approvals the deliveries read. */
  readonly filters: HistoryFilters;
  /** Days back from now by approved_at; 0: the whole history. Ignored when `since` is given. */
  readonly lookbackDays: number;
  /** Read approvals approved at or after this instant (ISO 8601), e.g. `pull --reconcile --since`. */
  readonly since?: string;
}

export interface ReconcileStats {
  historyPages: number;
  versionsRead: number;
  cancelledSeen: number;
  /** Withdrawals appended to the feed by this run. */
  withdrawals: number;
  since: string | null;
}

export async function runApprovedPricesReconciliation(
  deps: PullDeps,
  signal: AbortSignal | undefined,
  options: ReconcileOptions,
): Promise<ReconcileStats> {
  const since = windowStart(deps, options);
  const stats: ReconcileStats = { historyPages: 0, versionsRead: 0, cancelledSeen: 0, withdrawals: 0, since };
  const query = { ...options.filters, ...(since === null ? {} : { approved_after: since }) };
  const started = deps.clock.now();
  for await (const page of historyPages(deps.client, query, signal)) {
    stats.historyPages += 1;
    stats.versionsRead += page.items.length;
    for (const version of page.items) {
      if (version.cancelled_at) {
        stats.cancelledSeen += 1;
        if (await withdrawIfStored(deps, version)) stats.withdrawals += 1;
      }
    }
    checkAborted(signal);
  }
  deps.logger.info(
    {
      since,
      history_pages: stats.historyPages,
      versions: stats.versionsRead,
      cancelled: stats.cancelledSeen,
      withdrawals: stats.withdrawals,
      duration_ms: deps.clock.now() - started,
    },
    'approved prices reconciled with the history',
  );
  return stats;
}

/** The later of the configured approved_after and the lookback start; null reads everything. */
function windowStart(deps: PullDeps, options: ReconcileOptions): string | null {
  const configured = options.filters.approved_after ?? null;
  const lookback =
    options.since ??
    (options.lookbackDays > 0 ? new Date(deps.clock.now() - options.lookbackDays * DAY_MS).toISOString() : null);
  if (configured === null) return lookback;
  if (lookback === null) return configured;
  return Date.parse(configured) >= Date.parse(lookback) ? configured : lookback;
}

async function withdrawIfStored(deps: PullDeps, version: ApprovedPrice): Promise<boolean> {
  const stored = await getApprovedPrice(deps.db, version.id);
  if (!stored || stored.cancelled_at !== null) return false;
  return (await recordWithdrawal(deps.db, version)) !== null;
}
