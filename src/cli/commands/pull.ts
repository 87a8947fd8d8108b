/**
 * `pricing-agent pull`: the pull side once, for people and cron jobs (the daemon, `pricing-agent run`, schedules
 * the same functions).
 *
 *   pull [--once]                 approved prices: deliveries into the outbox, acknowledgements, per-store files
 *   pull --retry-parked           the same, after putting ids the platform refused (parked) back in the queue
 *   pull --reconcile [--since T]  the history reconciliation: withdrawals of prices cancelled after acknowledgement
 *   pull --history [--since T]    the registered history as JSON Lines on stdout; changes nothing anywhere
 *   pull --stream NAME [--full]   one mirror (products, product_store, transactions, competitor_prices, grids,
 *                                 grid:<id>); --full forgets its watermark first
 *
 * Ctrl-C (or SIGTERM) stops at the next checkpoint; the next run continues from there. A second one exits at once,
 * which is safe too: everything the agent relies on is committed before it is used.
 */
import { Command, InvalidArgumentError } from 'commander';
import { connectApi, connectApiWithPacing, pacingOf } from '../../api-from-config.ts';
import { isoDateTime } from '../../api/schemas/index.ts';
import { systemClock } from '../../clock.ts';
import type { Config } from '../../config/index.ts';
import type { MirrorConfig } from '../../pull/mirror-sources.ts';
import {
  approvedPricesOptions,
  historyPages,
  reconcileOptions,
  runApprovedPricesPull,
  runApprovedPricesReconciliation,
  runMirror,
  type PullDeps,
  type PullRunSummary,
  type ReconcileStats,
  type StreamRunSummary,
} from '../../pull/index.ts';
import { createLogger } from '../../log.ts';
import { unparkAll } from '../../store/acknowledgements.ts';
import { configOption, loadConfigForCommand } from './config.ts';
import { runCommand } from './errors.ts';
import { EXIT_FAILURE } from './exit-codes.ts';
import { openStateDb } from '../../store/open-state-db.ts';

interface PullOptions {
  readonly config: string;
  readonly once?: boolean;
  readonly reconcile?: boolean;
  readonly history?: boolean;
  readonly since?: string;
  readonly stream?: string;
  readonly full?: boolean;
  readonly retryParked?: boolean;
  readonly json?: boolean;
}

const FIXED_STREAMS = ['products', 'product_store', 'transactions', 'competitor_prices'] as const;

/** An ISO 8601 date-time, or a date (midnight UTC). */
function sinceTime(raw: string): string {
  const value = /^\d{4}-\d{2}-\d{2}$/.test(raw.trim()) ? `${raw.trim()}T00:00:00Z` : raw.trim();
  if (!isoDateTime.safeParse(value).success) {
    throw new InvalidArgumentError('expected an ISO 8601 date-time (2026-11-01T00:00:00Z) or a date (2026-11-01)');
  }
  return value;
}

function checkCombination(options: PullOptions): void {
  const modes = [options.once || options.retryParked, options.reconcile, options.history, options.stream !== undefined].filter(Boolean);
  if (modes.length > 1) throw new InvalidArgumentError('use one of --once (or --retry-parked), --reconcile, --history and --stream');
  if (options.full === true && options.stream === undefined) throw new InvalidArgumentError('--full needs --stream');
  if (options.since !== undefined && options.reconcile !== true && options.history !== true) {
    throw new InvalidArgumentError('--since goes with --history or --reconcile');
  }
}

/** Aborts on the first SIGINT/SIGTERM; a second one exits at once. */
function stopOnSignals(): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onSignal = (name: NodeJS.Signals): void => {
    if (controller.signal.aborted) process.exit(130);
    process.stderr.write(`pull: ${name}, stopping at the next checkpoint (again to exit at once)\n`);
    controller.abort(new Error(`stopped by ${name}; the next run continues where this one stopped`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

export function pullCommand(): Command {
  return new Command('pull')
    .description('pull approved prices into the outbox once, reconcile or read the history, or run one mirror')
    .addOption(configOption())
    .option('--once', 'one pull of approved prices: deliveries, acknowledgements, per-store files (the default)')
    .option('--reconcile', 'withdraw prices the history shows cancelled after they were acknowledged')
    .option('--history', 'print the registered history as JSON Lines on stdout; changes nothing in the API or the outbox')
    .option('--since <time>', 'with --history or --reconcile: approvals approved at or after this time', sinceTime)
    .option('--stream <name>', `run one mirror: ${FIXED_STREAMS.join(', ')}, grids or grid:<grid_id>`)
    .option('--full', 'with --stream: forget the watermark and read everything again')
    .option('--retry-parked', 'send again the acknowledgements the platform refused (parked ids; see `outbox stats`), then pull')
    .option('--json', 'print the summary as JSON')
    .action(
      runCommand(async (options: PullOptions) => {
        checkCombination(options);
        const config = await loadConfigForCommand(options.config);
        const logger = createLogger({ level: config.log.level, destination: 2 });
        const stop = stopOnSignals();
        try {
          if (options.history === true) {
            const api = await connectApiWithPacing(config, logger);
            try {
              return await printHistory(config, api.client, options.since, stop.signal);
            } finally {
              await api.close();
            }
          }
          const db = await openStateDb(config.state);
          const api = connectApi(config.api, logger, { pacing: pacingOf(db, logger) });
          try {
            const deps: PullDeps = { db, client: api.client, clock: systemClock, logger };
            return await runMode(deps, config, options, stop.signal);
          } finally {
            await api.close();
            await db.close();
          }
        } finally {
          stop.dispose();
        }
      }),
    );
}

async function runMode(deps: PullDeps, config: Config, options: PullOptions, signal: AbortSignal): Promise<number> {
  if (options.reconcile === true) {
    const stats = await runApprovedPricesReconciliation(deps, signal, reconcileOptions(config, options.since));
    write(options.json, stats, describeReconcile(stats));
    return 0;
  }
  if (options.stream !== undefined) {
    const { entry, gridId } = mirrorEntry(config, options.stream);
    const runs = await runMirror(deps, entry, signal, { full: options.full === true, ...(gridId ? { gridId } : {}) });
    write(options.json, runs, describeMirrorRuns(runs));
    // A stream that failed (its error printed above) fails the command: a script must not read it as done.
    return runs.some((r) => r.error !== null) ? EXIT_FAILURE : 0;
  }
  if (options.retryParked === true) {
    const unparked = await unparkAll(deps.db);
    deps.logger.info({ ids: unparked }, 'parked acknowledgements put back in the queue');
  }
  const summary = await runApprovedPricesPull(deps, signal, approvedPricesOptions(config));
  write(options.json, summary, describePullRun(summary));
  return 0;
}

function write(json: boolean | undefined, value: unknown, text: string): void {
  process.stdout.write(json === true ? `${JSON.stringify(value)}\n` : text);
}

/** The configured `pull.mirrors` entry of a stream name, or the defaults when the stream is not configured. */
function mirrorEntry(config: Config, name: string): { entry: MirrorConfig; gridId?: string } {
  const isGrid = name === 'grids' || name.startsWith('grid:');
  const stream = isGrid ? 'grids' : name;
  if (!isGrid && !(FIXED_STREAMS as readonly string[]).includes(name)) {
    throw new InvalidArgumentError(`unknown stream ${name}: use ${FIXED_STREAMS.join(', ')}, grids or grid:<grid_id>`);
  }
  const gridId = name.startsWith('grid:') ? name.slice('grid:'.length) : undefined;
  if (gridId === '') throw new InvalidArgumentError('grid:<grid_id> needs a grid id');
  const configured = config.pull.mirrors.find((m) => m.stream === stream);
  const base = { schedule: '', export: null, page_size: null };
  const entry: MirrorConfig =
    configured ??
    (stream === 'grids'
      ? { ...base, stream: 'grids', grid_ids: null, columns: null }
      : { ...base, stream: stream as (typeof FIXED_STREAMS)[number], filters: {} });
  return gridId === undefined ? { entry } : { entry, gridId };
}

/** The history as JSON Lines, newest first: read-only (history=true), the pull's filters, approved at or after `since`. */
async function printHistory(
  config: Config,
  client: PullDeps['client'],
  since: string | undefined,
  signal: AbortSignal,
): Promise<number> {
  const filters = { ...config.pull.approved_prices.filters, ...(since === undefined ? {} : { approved_after: since }) };
  let count = 0;
  for await (const page of historyPages(client, filters, signal)) {
    const text = page.items.map((item) => `${JSON.stringify(item)}\n`).join('');
    count += page.items.length;
    if (!process.stdout.write(text)) await new Promise((resolve) => process.stdout.once('drain', resolve));
  }
  process.stderr.write(`${count} approved-price versions${since === undefined ? '' : ` approved since ${since}`}\n`);
  return 0;
}

function describePullRun(s: PullRunSummary): string {
  const d = s.deliveries;
  const a = s.acks;
  const conflicts = Object.entries(a.conflicts).map(([reason, n]) => `${n} ${reason}`);
  const lines = [
    `deliveries:      ${d.pages} page(s), ${d.rows} approvals, ${d.inserted} new, ${d.feedRows} feed rows` +
      (d.replayed > 0 ? `, ${d.replayed} page(s) of an interrupted run replayed` : '') +
      (d.abandoned > 0 ? `, ${d.abandoned} refused replay(s) recovered from the history (${d.recovered} versions)` : '') +
      (d.restarted > 0 ? ', listing started over (the server refused the stored cursor)' : ''),
    ...(d.unreadable > 0 ? [`unreadable:      ${d.unreadable} delivered row(s) the agent cannot read: not stored, not acknowledged (see the log)`] : []),
    `acknowledged:    ${a.acknowledged} in ${a.requests} request(s)` +
      (a.alreadyAcknowledged > 0 ? `, ${a.alreadyAcknowledged} found acknowledged already` : ''),
    `not acknowledged: ${conflicts.length === 0 ? 'none' : conflicts.join(', ')}` +
      (a.withdrawals > 0 ? ` (${a.withdrawals} withdrawals fed)` : ''),
    ...(a.parked > 0 ? [`parked:          ${a.parked} id(s) the platform refused (see \`outbox stats\`; \`pull --retry-parked\` sends them again)`] : []),
  ];
  if (s.files.length > 0) lines.push(`store files:     ${s.files.length} written (${s.files.reduce((n, f) => n + f.rows, 0)} rows)`);
  lines.push(`took ${(s.durationMs / 1000).toFixed(1)} s`);
  return `${lines.join('\n')}\n`;
}

function describeReconcile(s: ReconcileStats): string {
  return (
    `history read: ${s.versionsRead} versions in ${s.historyPages} page(s)` +
    `${s.since === null ? '' : ` approved since ${s.since}`}; ${s.cancelledSeen} cancelled; ` +
    `${s.withdrawals} new withdrawal(s) fed\n`
  );
}

function describeMirrorRuns(runs: readonly StreamRunSummary[]): string {
  return runs
    .map((r) =>
      r.error !== null
        ? `${r.stream}: FAILED: ${r.error}\n`
        : `${r.stream}: ${r.rows} rows in ${r.pages} page(s)${r.resumed ? ' (resumed listing)' : ''}, ` +
          `updated_after ${r.updatedAfter ?? '-'}, watermark now ${r.watermark ?? '-'}` +
          `${r.exportFile === null ? '' : `, export ${r.exportFile}`}\n`,
    )
    .join('');
}
