/**
 * `pricing-agent outbox stats|consumers|ack|export`: what POS systems read (docs/outbox.md), for the people who run
 * them. stats and consumers open the database read-only (safe while the agent runs); ack writes one consumer
 * offset; export writes the per-store files of `outbox.exports` for feed rows not in a file yet.
 */
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { Config } from '../../config/index.ts';
import { type FeedConsumerStatus, feedOverview } from '../../feed/consumer-status.ts';
import { exportStoreFiles, EXPORT_FORMATS, type ExportFormat } from '../../outbox/store-files.ts';
import { parkedReasons } from '../../store/acknowledgements.ts';
import { StoreError } from '../../store/errors.ts';
import { openStateDb } from '../../store/open-state-db.ts';
import { outboxStats } from '../../store/outbox-stats.ts';
import { ackConsumer, countScopedFeed, listConsumers } from '../../store/price-feed.ts';
import type { StateDb } from '../../store/state-db.ts';
import { configOption, loadConfigForCommand } from './config.ts';
import { runCommand } from './errors.ts';
import { duration, shortTime, table } from './status-table.ts';
import { UsageError } from '../../usage-error.ts';

/** The state of `file`'s config; read-only opens never create or migrate it. */
async function withDb<T>(file: string, readonly: boolean, fn: (db: StateDb, config: Config) => Promise<T>): Promise<T> {
  const config = await loadConfigForCommand(file);
  const db = await openStateDb(config.state, { readonly });
  try {
    return await fn(db, config);
  } finally {
    await db.close();
  }
}

/** Why ids were parked (the platform's refusals), and what to do once the cause is fixed. */
async function parkedLines(db: StateDb): Promise<string[]> {
  const reasons = await parkedReasons(db, 5);
  if (reasons.length === 0) return [];
  return [
    ...reasons.map((r) => `  parked ${r.n}: ${r.reason}`),
    '  (the platform refused these acknowledgements; once fixed, `pricing-agent pull --retry-parked` sends them again)',
  ];
}

function print(json: boolean | undefined, value: unknown, text: () => string): void {
  process.stdout.write(json === true ? `${JSON.stringify(value)}\n` : text());
}

function nonNegativeInteger(raw: string): number {
  if (!/^\d{1,15}$/.test(raw.trim())) throw new InvalidArgumentError('expected a non-negative integer');
  return Number(raw);
}

interface Options {
  readonly config: string;
  readonly json?: boolean;
}

export function outboxCommand(): Command {
  const command = new Command('outbox').description('the outbox POS systems read: stats, consumer offsets, per-store files');

  command
    .command('stats')
    .description('feed size, acknowledgement state, consumers and per-store files at a glance')
    .addOption(configOption())
    .option('--json', 'print JSON')
    .action(
      runCommand((options: Options) =>
        withDb(options.config, true, async (db) => {
          const s = await outboxStats(db);
          const parked = await parkedLines(db);
          print(options.json, s, () =>
            [
              `feed:          ${s.feed_rows} rows (${s.withdrawals} withdrawals), last seq ${s.max_seq}`,
              `approvals:     ${s.approvals.total} stored: ${s.approvals.acknowledged} acknowledged, ` +
                `${s.approvals.ack_pending} waiting, ${s.approvals.conflict} not acknowledged (conflict), ` +
                `${s.approvals.parked} parked, ${s.approvals.not_delivered} from history reads`,
              ...parked,
              `oldest waiting: ${s.oldest_ack_pending_received_at ?? '-'}`,
              `pending page:  ${s.pending_delivery_intents === 0 ? 'none' : 'yes (replayed by the next pull)'}`,
              `consumers:     ${s.consumers}${s.max_consumer_lag === null ? '' : `, furthest behind by ${s.max_consumer_lag} rows`}`,
              `store files:   ${s.export_stores} stores, feed exported up to seq ${s.exported_up_to_seq ?? '-'}`,
              `database id:   ${s.database_id ?? '-'}`,
              '',
            ].join('\n'),
          );
        }),
      ),
    );

  command
    .command('consumers')
    .description('each consumer: its offset and rows not read; per store what it confirmed applied, how far behind, overdue')
    .addOption(configOption())
    .option('--json', 'print JSON Lines, one consumer per line')
    .addHelpText(
      'after',
      '\nFeed consumers (feed.consumers in the config) come first, then consumers that only keep an offset (SQL readers,\n' +
        '`outbox ack`). Per store: the highest seq it confirmed applied (POST /feed/v1/applied), the rows after it and the\n' +
        'age of the oldest, and OVERDUE when prices due today are unapplied past feed.apply_deadline (docs/feed.md).',
    )
    .action(
      runCommand((options: Options) =>
        withDb(options.config, true, async (db, config) => {
          const rows = await consumerRows(db, config, Date.now());
          if (options.json === true) {
            process.stdout.write(rows.map((r) => `${JSON.stringify(r.consumer)}\n`).join(''));
            return;
          }
          if (rows.length === 0) {
            process.stdout.write('no consumers yet (feed.consumers in the config, or pricing-agent outbox ack --consumer NAME --seq N)\n');
            return;
          }
          process.stdout.write(`${consumerTable(rows, new Date()).join('\n')}\n`);
        }),
      ),
    );

  command
    .command('ack')
    .description('record that a consumer has processed every feed row up to --seq')
    .addOption(configOption())
    .requiredOption('--consumer <name>', 'the consumer, e.g. pos-store-0042')
    .requiredOption('--seq <n>', 'the last seq it has processed', nonNegativeInteger)
    .option('--force', 'allow moving the offset backwards (to read rows again)')
    .option('--json', 'print JSON')
    .action(
      runCommand((options: Options & { consumer: string; seq: number; force?: boolean }) =>
        withDb(options.config, false, async (db) => {
          const offset = await ackConsumer(db, options.consumer, options.seq, { force: options.force === true }).catch((error: unknown) => {
            // A seq the feed has not reached, or one behind the offset without --force, is a mistake in what was
            // asked: nothing was recorded.
            const asked = error instanceof StoreError && (error.code === 'SEQ_BEYOND_FEED' || error.code === 'OFFSET_BACKWARDS');
            throw asked ? new UsageError(error.code, error.message) : error;
          });
          print(options.json, offset, () => `${offset.consumer} is at seq ${offset.last_seq} (${offset.lag} rows behind)\n`);
        }),
      ),
    );

  command
    .command('export')
    .description('write per-store files (outbox.exports) for the feed rows that are in no file yet')
    .addOption(configOption())
    .option('--dir <dir>', 'directory, when outbox.exports is not set (with it, its own)')
    .addOption(new Option('--format <format>', 'format, when outbox.exports is not set (with it, its own)').choices(EXPORT_FORMATS))
    .option('--json', 'print JSON Lines, one file per line')
    .action(
      runCommand((options: Options & { dir?: string; format?: ExportFormat }) =>
        withDb(options.config, false, async (db, config) => {
          const configured = config.outbox.exports;
          const dir = options.dir ?? configured?.dir;
          if (dir === undefined) {
            throw new UsageError('OUTBOX_NO_EXPORT_DIR', 'no export directory: set outbox.exports in the config file or pass --dir');
          }
          // Each feed row goes into one file only (one checkpoint per store): files written elsewhere, or in another
          // format, take their rows away from the folder the tills read.
          const elsewhere = configured != null && resolve(dir) !== resolve(configured.dir);
          if (configured != null && (elsewhere || (options.format !== undefined && options.format !== configured.format))) {
            throw new UsageError(
              'OUTBOX_EXPORTS_CONFIGURED',
              `outbox.exports writes ${configured.format} files to ${configured.dir}, and each feed row goes into one file only: ` +
                `files ${elsewhere ? `in ${dir}` : `in ${String(options.format)}`} would take their rows away from there; leave out --dir and --format, or change outbox.exports`,
            );
          }
          // Made (or found) first, so that a folder that cannot be used is said even when no row is left to write.
          await mkdir(dir, { recursive: true, mode: 0o750 }).catch((error: unknown) => {
            throw new Error(`cannot use the export folder ${dir} (${(error as NodeJS.ErrnoException).code ?? String(error)}): give a folder the agent can write`);
          });
          const files = await exportStoreFiles(db, dir, {
            format: options.format ?? configured?.format ?? 'csv',
            ...(configured ? { maxRowsPerFile: configured.max_rows_per_file } : {}),
          });
          if (options.json === true) {
            process.stdout.write(files.map((f) => `${JSON.stringify(f)}\n`).join(''));
            return;
          }
          const rows = files.reduce((sum, f) => sum + f.rows, 0);
          const list = files.map((f) => `  ${f.path} (${f.rows} rows)\n`).join('');
          process.stdout.write(`${files.length} file(s), ${rows} rows, in ${dir}\n${list}`);
        }),
      ),
    );

  return command;
}

interface ConsumerRow {
  /** As `status --json` shows feed.consumers, plus the rows after its offset that it has not read. */
  consumer: FeedConsumerStatus & { unread_rows: number };
  overdue: ReadonlySet<string>;
}

/** Feed consumers first (config order), then the consumers that only keep an offset, by name. */
async function consumerRows(db: StateDb, config: Config, nowMs: number): Promise<ConsumerRow[]> {
  const feed = await feedOverview(db, config.feed, nowMs);
  const scopes = new Map(config.feed.consumers.map((c) => [c.name, c.stores]));
  const rows: ConsumerRow[] = [];
  for (const c of feed.consumers) {
    rows.push({
      consumer: { ...c, unread_rows: await countScopedFeed(db, scopes.get(c.name) ?? '*', c.offset ?? 0) },
      overdue: new Set(feed.overdue.filter((o) => o.consumer === c.name).map((o) => o.store_id)),
    });
  }
  const others = (await listConsumers(db)).filter((c) => !scopes.has(c.consumer)).sort((a, b) => (a.consumer < b.consumer ? -1 : 1));
  for (const c of others) {
    rows.push({ consumer: { name: c.consumer, offset: c.last_seq, last_seen: c.updated_at, stores: [], unread_rows: c.lag }, overdue: new Set() });
  }
  return rows;
}

function consumerTable(rows: readonly ConsumerRow[], now: Date): string[] {
  const lines: string[][] = [];
  for (const { consumer: c, overdue } of rows) {
    const head = [c.name, c.offset === null ? '-' : String(c.offset), String(c.unread_rows), shortTime(c.last_seen, now)];
    if (c.stores.length === 0) lines.push([...head, '-', '-', '-', '-', '']);
    for (const [i, s] of c.stores.entries()) {
      const lead = i === 0 ? head : ['', '', '', ''];
      const oldest = s.lag_rows === 0 ? '-' : duration(s.lag_seconds);
      lines.push([...lead, s.store_id, s.applied_seq === null ? '-' : String(s.applied_seq), String(s.lag_rows), oldest, overdue.has(s.store_id) ? 'OVERDUE' : '']);
    }
  }
  return table(['CONSUMER', '#OFFSET', '#UNREAD', 'LAST SEEN', 'STORE', '#APPLIED', '#NOT APPLIED', 'OLDEST', 'DEADLINE'], lines);
}
