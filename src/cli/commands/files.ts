/**
 * `pricing-agent files list|show|retry`: the push ledger (every file the agent claimed) for people and scripts.
 * list and show open the state database read-only (safe while the daemon runs); retry: files-retry.ts.
 *
 * Exit codes: exit-table.ts. (An unknown option or --status value is a usage error: exit 2 with the allowed values.)
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import type { Config } from '../../config/index.ts';
import { showFile } from '../../status/file-list.ts';
import { DEFAULT_LIST_LIMIT, FILE_STATUS_FILTERS, listFiles, type FileStatusFilter } from '../../store/push-ledger-views.ts';
import { isMissingState, openStateDb, stateLocation } from '../../store/open-state-db.ts';
import type { StateDb } from '../../store/state-db.ts';
import { configOption, loadConfigForCommand } from './config.ts';
import { EXIT_FAILURE } from './exit-codes.ts';
import { runCommand } from './errors.ts';
import { listText, showText } from './files-text.ts';

interface CommonOptions {
  readonly config: string;
  readonly json?: boolean;
}

interface ListOptions extends CommonOptions {
  readonly source?: string;
  readonly status?: FileStatusFilter;
  readonly limit: number;
}

function positiveInt(max: number): (raw: string) => number {
  return (raw) => {
    const value = Number(raw);
    if (!/^\d+$/.test(raw.trim()) || value < 1 || value > max) throw new InvalidArgumentError(`expected an integer from 1 to ${max}`);
    return value;
  };
}

/** Opens the database read-only; a database that does not exist yet holds no files (null). */
async function readLedger<T>(config: Config, read: (db: StateDb | null) => Promise<T> | T): Promise<T> {
  let db: StateDb | null = null;
  try {
    db = await openStateDb(config.state, { readonly: true });
  } catch (error) {
    if (!isMissingState(error)) throw error;
    process.stderr.write(`no state database at ${stateLocation(config.state)} yet: the agent has not claimed any file\n`);
  }
  try {
    return await read(db);
  } finally {
    await db?.close();
  }
}

function print(json: boolean | undefined, value: unknown, text: string): void {
  process.stdout.write(json === true ? `${JSON.stringify(value, null, 2)}\n` : text);
}

/**
 * `files` and its subcommands. retry and release may push, so they load the push pipeline and the HTTP client when
 * they run: list and show, which people and scripts run often, start without them (about 260 modules fewer).
 */
export function filesCommand(): Command {
  const command = new Command('files').description('list the files the agent claimed, show one, retry a failed or deferred one');

  command
    .command('list')
    .description('list claimed files, newest first')
    .option('--source <name>', 'only files of this source (`cli:<entity>` for push --entity)')
    .addOption(new Option('--status <status>', 'only files with this status (processing: every unfinished status)').choices(FILE_STATUS_FILTERS))
    .option('--limit <n>', 'at most this many files', positiveInt(100_000), DEFAULT_LIST_LIMIT)
    .option('--json', 'print a JSON array')
    .addOption(configOption())
    .action(
      runCommand(async (options: ListOptions) => {
        const config = await loadConfigForCommand(options.config);
        const now = new Date();
        await readLedger(config, async (db) => {
          const filter = { limit: options.limit, ...(options.source ? { source: options.source } : {}), ...(options.status ? { status: options.status } : {}) };
          const items = db ? await listFiles(db, filter) : [];
          print(options.json, items, listText(items, now));
        });
      }),
    );

  command
    .command('show')
    .description('show one file: its ledger row, counts, where it and its report are, its first rejects')
    .argument('<id>', 'the file id (from files list, status or a log line)', positiveInt(Number.MAX_SAFE_INTEGER))
    .option('--json', 'print one JSON object')
    .addOption(configOption())
    .action(
      runCommand(async (id: number, options: CommonOptions) => {
        const config = await loadConfigForCommand(options.config);
        return readLedger(config, async (db) => {
          const detail = db ? await showFile(db, id) : undefined;
          if (!detail) {
            process.stderr.write(`no file with id ${id} in the ledger (see pricing-agent files list)\n`);
            return EXIT_FAILURE;
          }
          print(options.json, detail, showText(detail, new Date()));
          return 0;
        });
      }),
    );

  command
    .command('retry')
    .description('failed: move the file back into its inbox; in processing/: push it now (needs the API)')
    .argument('<id>', 'the file id', positiveInt(Number.MAX_SAFE_INTEGER))
    .option('--json', 'print one JSON object')
    .addOption(configOption())
    .addHelpText(
      'after',
      '\nWhat a retry does:\n' +
        '  failed       the file goes back from failed/ into its source\'s inbox and is claimed again as a new file\n' +
        '               (content that failed is not a duplicate: only content already done is skipped)\n' +
        '  processing   (deferred, or left by a stopped agent) pushed now in this process, resuming at the first batch\n' +
        '               without a result; refused while a daemon answers (it retries by itself; restart it to retry now)\n' +
        '  done, duplicate  refused: use pricing-agent push FILE --source NAME --force to send the content again',
    )
    .action(
      runCommand(async (id: number, options: CommonOptions) => {
        const { retryFile } = await import('./files-retry.ts');
        return retryFile(await loadConfigForCommand(options.config), id, options.json === true);
      }),
    );

  command
    .command('release')
    .description('send a file the brakes held (held/ of its inbox) after all')
    .argument('<name>', 'the held file: its name or its id (status and files list show them)')
    .option('--source <name>', 'the source, when two hold a file of that name')
    .option('--json', 'print one JSON object')
    .addOption(configOption())
    .addHelpText(
      'after',
      '\nThe file goes back into its inbox and is sent without the brakes (once: the same content dropped again later\n' +
        'is braked again). A running daemon sends it; without one it is pushed now, in this process.',
    )
    .action(
      runCommand(async (name: string, options: CommonOptions & { source?: string }) => {
        const { releaseCommand } = await import('./files-release.ts');
        return releaseCommand(await loadConfigForCommand(options.config), name, options.source, options.json === true);
      }),
    );

  return command;
}
