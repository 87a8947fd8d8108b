/**
 * `state backup` and `state restore` for the configured backend. SQLite is copied by the agent
 * (sqlite/backup.ts); a PostgreSQL schema is dumped and restored with PostgreSQL's own tools, whose commands are
 * printed (docs/upgrade.md), so that the dump is one a database administrator already knows how to handle.
 */
import type { Config } from '../config/index.ts';
import { StoreError } from './errors.ts';
import { backupSqlite, defaultBackupPath, restoreSqlite } from './sqlite/backup.ts';
import { databasePath } from './sqlite/open-sqlite.ts';

function postgresCommand(state: Config['state'], verb: 'backup' | 'restore'): StoreError {
  const schema = state.postgres?.schema ?? 'pricing_agent';
  const command =
    verb === 'backup'
      ? `pg_dump --schema=${schema} --format=custom --file=FILE DATABASE_URL`
      : `pg_restore --clean --if-exists --schema=${schema} --dbname=DATABASE_URL FILE with the agent stopped`;
  return new StoreError('INVALID_ARGUMENT', `state ${verb} copies a SQLite state only: for PostgreSQL run ${command} (docs/upgrade.md)`);
}

/** Writes a consistent copy of the state (also while the agent runs); returns the file. */
export async function backupState(state: Config['state'], to: string | undefined, now: Date): Promise<string> {
  if (state.backend === 'postgres') throw postgresCommand(state, 'backup');
  const file = to ?? defaultBackupPath(state.dir, now);
  await backupSqlite(databasePath(state.dir), file);
  return file;
}

/** Puts the backup `file` in place of the state (the caller made sure no agent runs); returns the state's file. */
export function restoreState(state: Config['state'], file: string): string {
  if (state.backend === 'postgres') throw postgresCommand(state, 'restore');
  const path = databasePath(state.dir);
  restoreSqlite(file, path);
  return path;
}
