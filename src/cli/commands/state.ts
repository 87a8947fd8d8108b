/**
 * `pricing-agent state migrate --to postgres`: moves a site's SQLite state into the empty PostgreSQL schema of
 * `state.postgres` (src/store/copy-state.ts does the copy: every table, ids and feed seqs kept, the database id
 * kept, one transaction). Then the config switches to `state.backend: postgres` and nothing is sent or acknowledged
 * again. The agent must be stopped meanwhile: refused while a daemon answers on the configured address.
 *
 * Exit codes: 0 copied; 1 refused or failed (the target is left as it was); 2 a configuration mistake.
 */
import { stat } from 'node:fs/promises';
import { Command, Option } from 'commander';
import type { Config } from '../../config/index.ts';
import { checkDaemon } from '../../status/daemon-probe.ts';
import { copyState, type CopiedTable } from '../../store/copy-state.ts';
import { openStateDb, stateLocation } from '../../store/open-state-db.ts';
import { backupState, restoreState } from '../../store/state-backup.ts';
import { lockState } from '../../store/state-lock.ts';
import { configOption, loadConfigForCommand } from './config.ts';
import { runCommand } from './errors.ts';
import { UsageError } from '../../usage-error.ts';

/** The state cannot be copied, backed up or restored as asked (exit code 1, like any failure). */
class StateRefusedError extends Error {}

interface MigrateOptions {
  readonly config: string;
  readonly to: 'postgres';
  readonly json?: boolean;
}

async function migrate(config: Config, say: (text: string) => void): Promise<{ from: string; to: string; tables: CopiedTable[] }> {
  if (config.state.backend === 'postgres') {
    throw new StateRefusedError('state.backend is already postgres: there is nothing to migrate');
  }
  if (config.state.postgres === null) {
    throw new StateRefusedError('set state.postgres (url, password_file or password, schema) to say where the state goes; keep state.backend: sqlite until the copy is done');
  }
  const daemon = await checkDaemon(config);
  if (daemon.state === 'ready' || daemon.state === 'not_ready') {
    throw new StateRefusedError(`an agent answers at ${daemon.url ?? '?'}: stop it first (it would keep writing the SQLite state during the copy)`);
  }
  const sqliteState = { ...config.state, backend: 'sqlite' as const };
  const postgresState = { ...config.state, backend: 'postgres' as const };
  const source = await openStateDb(sqliteState);
  try {
    const target = await openStateDb(postgresState);
    try {
      say(`copying ${stateLocation(sqliteState)} into ${stateLocation(postgresState)}`);
      const tables = await copyState(source, target, { onTable: (t) => say(`  ${t.table}: ${t.rows} rows`) });
      return { from: source.location, to: target.location, tables };
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

async function restore(config: Config, file: string): Promise<{ readonly location: string; readonly kept: string | null }> {
  const found = await stat(file).catch(() => null);
  if (found === null) throw new UsageError('RESTORE_FILE_MISSING', `${file}: no such file; give the backup file to restore`);
  if (found.isDirectory()) throw new UsageError('RESTORE_FILE_MISSING', `${file} is a folder: give the backup file to restore`);
  const daemon = await checkDaemon(config);
  if (daemon.state === 'ready' || daemon.state === 'not_ready') {
    throw new StateRefusedError(`an agent answers at ${daemon.url ?? '?'}: stop it first (it would keep writing the state it holds open)`);
  }
  // A daemon without http (or on another port) does not answer there: the state's lock finds it (exit 1).
  const release = lockState(config.state, 'stop it before restoring (it would keep writing the state it holds open)');
  try {
    return await restoreState(config.state, file, new Date());
  } catch (error) {
    throw new StateRefusedError((error as Error).message, { cause: error });
  } finally {
    release();
  }
}

export function stateCommand(): Command {
  const command = new Command('state').description('move the state between backends, back it up and restore it');
  command
    .command('backup')
    .description('write a consistent copy of the state, also while the agent runs (PostgreSQL: with pg_dump)')
    .option('--to <file>', 'where the copy goes (default: <state dir>/backups/pricing-agent-<version>-<UTC time>.db, or .dump for PostgreSQL)')
    .addOption(configOption())
    .action(
      runCommand(async (options: { config: string; to?: string }) => {
        const config = await loadConfigForCommand(options.config);
        const file = await backupState(config.state, options.to, new Date());
        process.stdout.write(`backup written to ${file}\nRestore it with the agent stopped: pricing-agent state restore ${file}\n`);
      }),
    );
  command
    .command('restore')
    .description('put a backup back in place of the state (the agent must be stopped; PostgreSQL: with pg_restore)')
    .argument('<file>', 'a backup written by state backup or before an upgrade')
    .addOption(configOption())
    .action(
      runCommand(async (file: string, options: { config: string }) => {
        const config = await loadConfigForCommand(options.config);
        const { location, kept } = await restore(config, file);
        const undo = kept === null ? '' : `The state it replaced is kept in ${kept} (pricing-agent state restore ${kept} puts it back).\n`;
        process.stdout.write(`restored ${file} to ${location}. Start the agent that wrote the backup (or a newer one).\n${undo}`);
      }),
    );
  command
    .command('migrate')
    .description('copy the SQLite state into the empty PostgreSQL schema of state.postgres (the agent must be stopped)')
    .addOption(new Option('--to <backend>', 'the backend to copy to').choices(['postgres']).makeOptionMandatory())
    .option('--json', 'print the copied tables as JSON')
    .addOption(configOption())
    .action(
      runCommand(async (options: MigrateOptions) => {
        const config = await loadConfigForCommand(options.config);
        const say = options.json === true ? () => undefined : (text: string) => process.stderr.write(`${text}\n`);
        const result = await migrate(config, say);
        const rows = result.tables.reduce((n, t) => n + t.rows, 0);
        if (options.json === true) process.stdout.write(`${JSON.stringify(result)}\n`);
        else {
          process.stdout.write(
            `copied ${rows} rows in ${result.tables.length} tables to ${result.to}.\n` +
              `Next: set state.backend: postgres in ${options.config}, then start the agent. The SQLite file stays as it was (keep it as a backup).\n`,
          );
        }
      }),
    );
  return command;
}
