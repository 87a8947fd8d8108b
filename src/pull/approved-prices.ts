/**
 * One run of the approved-prices pull, as the daemon's schedule (`pull.approved_prices.schedule`) and
 * `pricing-agent pull --once` start it:
 *   1. deliveries: replay an interrupted page, then page from the checkpointed cursor until the listing is
 *      complete, each page committed with its cursor (deliveries.ts);
 *   2. acknowledgements: every committed, unacknowledged id in batches of at most 500, conflicts resolved
 *      (acknowledge.ts);
 *   3. per-store files for the new feed rows, when `outbox.exports` is configured (src/outbox/store-files.ts).
 *
 * Resumable at every step: each step's progress is in the database (pending intent and cursor, ack_status, the
 * export state), so a run that dies anywhere, or is aborted through `signal`, is continued by the next run.
 * Two runs must not overlap on one database (the daemon's scheduler runs them without overlap); a second run would
 * fail on the pending intent of the first, not corrupt anything.
 */
import { exportStoreFiles, type ExportedFile, type ExportFormat } from '../outbox/store-files.ts';
import { acknowledgeStored, emptyAckStats, type AckStats } from './acknowledge.ts';
import { emptyDeliveryStats, pullDeliveries, type DeliveryStats } from './deliveries.ts';
import type { HistoryFilters } from './history-read.ts';
import type { PullDeps } from './pull-deps.ts';

export const DEFAULT_PAGE_SIZE = 500;

export interface StoreFileExports {
  readonly dir: string;
  readonly format: ExportFormat;
  readonly maxRowsPerFile?: number;
}

export interface ApprovedPricesPullOptions {
  /** `pull.approved_prices.filters`. Default: none. */
  readonly filters?: HistoryFilters;
  /** `pull.approved_prices.page_size` (1..500). Default 500. */
  readonly pageSize?: number;
  /** `outbox.exports`; null or absent: no files. */
  readonly exports?: StoreFileExports | null;
}

export interface PullRunSummary {
  deliveries: DeliveryStats;
  acks: Omit<AckStats, 'conflicts'> & { conflicts: Record<string, number> };
  files: ExportedFile[];
  durationMs: number;
}

export async function runApprovedPricesPull(
  deps: PullDeps,
  signal?: AbortSignal,
  options: ApprovedPricesPullOptions = {},
): Promise<PullRunSummary> {
  const started = deps.clock.now();
  const filters = options.filters ?? {};
  const summary: PullRunSummary = { deliveries: emptyDeliveryStats(), acks: emptyAckStats(), files: [], durationMs: 0 };
  try {
    await pullDeliveries(deps, { filters, pageSize: options.pageSize ?? DEFAULT_PAGE_SIZE }, summary.deliveries, signal);
    await acknowledgeStored({ deps, filters, stats: summary.acks }, signal);
    if (options.exports) {
      summary.files = await exportStoreFiles(deps.db, options.exports.dir, {
        format: options.exports.format,
        ...(options.exports.maxRowsPerFile === undefined ? {} : { maxRowsPerFile: options.exports.maxRowsPerFile }),
      });
    }
  } catch (error) {
    summary.durationMs = deps.clock.now() - started;
    deps.logger.warn({ ...logFields(summary), error: (error as Error).message }, 'approved prices pull stopped');
    throw error;
  }
  summary.durationMs = deps.clock.now() - started;
  deps.logger.info(logFields(summary), 'approved prices pulled');
  return summary;
}

function logFields(summary: PullRunSummary): Record<string, unknown> {
  const { deliveries: d, acks: a } = summary;
  return {
    pages: d.pages,
    replayed: d.replayed,
    rows: d.rows,
    rows_new: d.inserted,
    feed_rows: d.feedRows,
    ack_requests: a.requests,
    acknowledged: a.acknowledged,
    already_acknowledged: a.alreadyAcknowledged,
    conflicts: a.conflicts,
    withdrawals: a.withdrawals,
    files: summary.files.length,
    duration_ms: summary.durationMs,
  };
}
