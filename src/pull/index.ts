/**
 * The pull side: approved prices into the outbox, the history reconciliation, the mirrors. The functions the
 * daemon's scheduler and the `pull` command call, and how each takes its options from the loaded Config.
 */
import type { Config } from '../config/index.ts';
import type { ApprovedPricesPullOptions } from './approved-prices.ts';
import type { ReconcileOptions } from './reconcile.ts';

export { runApprovedPricesPull, type ApprovedPricesPullOptions, type PullRunSummary } from './approved-prices.ts';
export { runApprovedPricesReconciliation, type ReconcileOptions, type ReconcileStats } from './reconcile.ts';
export { runMirror, type MirrorRunOptions, type StreamRunSummary } from './mirrors.ts';
export { historyPages } from './history-read.ts';
export type { PullDeps } from './pull-deps.ts';

/** `pull.approved_prices` and `outbox.exports` as the options of one pull run. */
export function approvedPricesOptions(config: Config): ApprovedPricesPullOptions {
  const section = config.pull.approved_prices;
  const files = config.outbox.exports;
  return {
    filters: { ...section.filters },
    pageSize: section.page_size,
    exports: files ? { dir: files.dir, format: files.format, maxRowsPerFile: files.max_rows_per_file } : null,
    recoveryLookbackDays: section.reconcile.lookback_days,
  };
}

/** `pull.approved_prices.reconcile` (and the pull's filters) as the options of one reconciliation. */
export function reconcileOptions(config: Config, since?: string): ReconcileOptions {
  const section = config.pull.approved_prices;
  return {
    filters: { ...section.filters },
    lookbackDays: section.reconcile.lookback_days,
    ...(since === undefined ? {} : { since }),
  };
}
