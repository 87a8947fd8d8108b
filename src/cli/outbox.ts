/**
 * `pricing-agent outbox stats|consumers|ack|export`: what POS systems read (docs/outbox.md), for the people who run
 * them. stats and consumers open the database read-only (safe while the agent runs); ack writes one consumer
 * offset; export writes the per-store files of `outbox.exports` for feed rows not in a file yet.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import type { Config } from '../config/index.ts';
import { ackConsumer, exportStoreFiles, listConsumers, outboxStats, EXPORT_FORMATS } from '../outbox/index.ts';
import type { ExportFormat } from '../outbox/store-files.ts';
import { databasePath, openDatabase } from '../store/open-database.ts';
import type { StateDb } from '../store/state-db.ts';
import { configOption, loadConfigForCommand } from './config.ts';
import { runCommand } from './errors.ts';

/** The state database of `config` (`<state.dir>/pricing-agent.db`); read-only opens never create or migrate it. */
export function openStateDb(config: Config, readonly = false): Promise<StateDb> {
  return openDatabase(databasePath(config.state.dir), { readonly });
}

async function withDb<T>(file: string, readonly: boolean, fn: (db: StateDb, config: Config) => Promise<T>): Promise<T> {
  const config = await loadConfigForCommand(file);
  const db = await openStateDb(config, readonly);
  try {
    return await fn(db, config);
  } finally {
    await db.close();
  }
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
          print(options.json, s, () =>
            [
              `feed:          ${s.feed_rows} rows (${s.withdrawals} withdrawals), last seq ${s.max_seq}`,
              `approvals:     ${s.approvals.total} stored: ${s.approvals.acknowledged} acknowledged, ` +
                `${s.approvals.ack_pending} waiting, ${s.approvals.conflict} not acknowledged (conflict), ` +
                `${s.approvals.not_delivered} from history reads`,
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
    .description('every consumer offset with its lag (feed rows not read yet), the most behind first')
    .addOption(configOption())
    .option('--json', 'print JSON Lines, one consumer per line')
    .action(
      runCommand((options: Options) =>
        withDb(options.config, true, async (db) => {
          const consumers = await listConsumers(db);
          if (options.json === true) {
            process.stdout.write(consumers.map((c) => `${JSON.stringify(c)}\n`).join(''));
            return;
          }
          if (consumers.length === 0) {
            process.stdout.write('no consumers yet (pricing-agent outbox ack --consumer NAME --seq N records one)\n');
            return;
          }
          const width = Math.max(8, ...consumers.map((c) => c.consumer.length));
          const lines = consumers.map(
            (c) => `${c.consumer.padEnd(width)}  ${String(c.last_seq).padStart(10)}  ${String(c.lag).padStart(8)}  ${c.updated_at}`,
          );
          process.stdout.write(`${'consumer'.padEnd(width)}  ${'last_seq'.padStart(10)}  ${'lag'.padStart(8)}  updated_at\n${lines.join('\n')}\n`);
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
        withDb(options.config, false, (db) => {
          const offset = ackConsumer(db, options.consumer, options.seq, { force: options.force === true });
          print(options.json, offset, () => `${offset.consumer} is at seq ${offset.last_seq} (${offset.lag} rows behind)\n`);
          return Promise.resolve();
        }),
      ),
    );

  command
    .command('export')
    .description('write per-store files (outbox.exports) for the feed rows that are in no file yet')
    .addOption(configOption())
    .option('--dir <dir>', 'directory instead of outbox.exports.dir')
    .addOption(new Option('--format <format>', 'instead of outbox.exports.format').choices(EXPORT_FORMATS))
    .option('--json', 'print JSON Lines, one file per line')
    .action(
      runCommand((options: Options & { dir?: string; format?: ExportFormat }) =>
        withDb(options.config, false, async (db, config) => {
          const configured = config.outbox.exports;
          const dir = options.dir ?? configured?.dir;
          if (dir === undefined) {
            throw new Error('no export directory: set outbox.exports in the config file or pass --dir');
          }
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
