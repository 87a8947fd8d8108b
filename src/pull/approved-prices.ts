/**
 * One run of the approved-prices pull, as the daemon's schedule (`pull.approved_prices.schedule`) and
 * `pricing-agent pull --once` start it:
 *   1. deliveries: replay an interrupted page, then page from the checkpointed cursor until the listing is
 *      complete, each page committed with its cursor (deliveries.ts);
 *   2. acknowledgements: every committed, unacknowledged id in batches of at most 500, conflicts resolved
 *      (acknowledge.ts). They run beside the deliveries, as a second lane: a full batch of committed ids is sent
 *      while the next page is being fetched, the rest once the listing is complete. Only ids read back from the
 *      database as committed are sent, so the order "stored, then acknowledged" holds per id; running the lanes
 *      side by side only overlaps the waits for the network with the other lane's SQLite work;
 *   3. per-store files for the new feed rows, when `outbox.exports` is configured (src/outbox/store-files.ts),
 *      whatever happened to the acknowledgements and to the deliveries: every stored price reaches its store.
 * A failing lane does not stop the other: prices are stored even while acknowledgements are refused, and stored
 * ids are acknowledged even when a deliveries request fails. The first error is thrown once both have ended and
 * the files are written.
 *
 * Resumable at every step: each step's progress is in the database (pending intent and cursor, approval_acks,
 * the export state), so a run that dies anywhere, or is aborted through `signal`, is continued by the next run.
 * Two runs must not overlap on one database (the daemon's scheduler runs them without overlap); a second run would
 * fail on the pending intent of the first, not corrupt anything.
 */
import { exportStoreFiles, type ExportedFile, type ExportFormat } from '../outbox/store-files.ts';
import { acknowledgeStored, emptyAckStats, type AckStats } from './acknowledge.ts';
import { emptyDeliveryStats, pullDeliveries, type DeliveryStats } from './deliveries.ts';
import type { HistoryFilters } from './history-read.ts';
import type { PullDeps } from './pull-deps.ts';
import { StoredPages } from './stored-pages.ts';

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
  /** How far back a refused replay's page is looked for in the history (reconcile.lookback_days). Default 90. */
  readonly recoveryLookbackDays?: number;
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
    const pages = new StoredPages();
    const settings = {
      filters,
      pageSize: options.pageSize ?? DEFAULT_PAGE_SIZE,
      recoveryLookbackDays: options.recoveryLookbackDays ?? DEFAULT_RECOVERY_LOOKBACK_DAYS,
    };
    const deliveries = pullDeliveries(deps, settings, summary.deliveries, signal, () => pages.stored()).finally(() =>
      pages.finish(),
    );
    const acks = acknowledgeStored({ deps, filters, stats: summary.acks, pages }, signal);
    const [delivered, acknowledged] = await Promise.allSettled([deliveries, acks]);
    // The stores get their files whatever the platform said to the acknowledgements (or to a later page).
    const files = options.exports && !signal?.aborted ? await writeStoreFiles(deps, options.exports) : { files: [], error: null };
    summary.files = files.files;
    if (delivered.status === 'rejected') throw delivered.reason;
    if (acknowledged.status === 'rejected') throw acknowledged.reason;
    if (files.error !== null) throw files.error;
  } catch (error) {
    summary.durationMs = deps.clock.now() - started;
    deps.logger.warn({ ...logFields(summary), error: (error as Error).message }, 'approved prices pull stopped');
    throw error;
  }
  summary.durationMs = deps.clock.now() - started;
  deps.logger.info(logFields(summary), 'approved prices pulled');
  return summary;
}

const DEFAULT_RECOVERY_LOOKBACK_DAYS = 90;

async function writeStoreFiles(deps: PullDeps, exports: StoreFileExports): Promise<{ files: ExportedFile[]; error: Error | null }> {
  try {
    const files = await exportStoreFiles(deps.db, exports.dir, {
      format: exports.format,
      ...(exports.maxRowsPerFile === undefined ? {} : { maxRowsPerFile: exports.maxRowsPerFile }),
    });
    return { files, error: null };
  } catch (error) {
    return { files: [], error: error instanceof Error ? error : new Error(String(error)) };
  }
}

function logFields(summary: PullRunSummary): Record<string, unknown> {
  const { deliveries: d, acks: a } = summary;
  return {
    pages: d.pages,
    replayed: d.replayed,
    recovered: d.recovered,
    restarted: d.restarted,
    unreadable: d.unreadable,
    rows: d.rows,
    rows_new: d.inserted,
    feed_rows: d.feedRows,
    ack_requests: a.requests,
    acknowledged: a.acknowledged,
    already_acknowledged: a.alreadyAcknowledged,
    conflicts: a.conflicts,
    parked: a.parked,
    withdrawals: a.withdrawals,
    files: summary.files.length,
    duration_ms: summary.durationMs,
  };
}
