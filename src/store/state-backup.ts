/**
 * `state backup` and `state restore` for the configured backend. SQLite is copied by the agent
 * (sqlite/backup.ts); a PostgreSQL schema is dumped and restored with PostgreSQL's own tools (postgres/dump.ts), so
 * that the dump is one a database administrator already knows how to handle.
 */
import type { Config } from '../config/index.ts';
import { pathExists } from '../path-exists.ts';
import { UsageError } from '../usage-error.ts';
import { describeLocation, postgresOfState } from './postgres/location.ts';
import { defaultBackupPath } from './upgrade-safety.ts';
import { backupSqlite, restoreSqlite } from './sqlite/backup.ts';
import { databasePath } from './sqlite/open-sqlite.ts';

/** PostgreSQL's dump and restore, loaded only for a state on PostgreSQL (they load the driver). */
const postgresDump = () => import('./postgres/dump.ts');

/**
 * Writes a consistent copy of the state (also while the agent runs); returns the file. SQLite: a database file;
 * PostgreSQL: pg_dump's custom format of the agent's schema (`.dump`). A `to` where something already is, is refused
 * before anything is written: `--to` naming the config file or the live database replaced it with the copy.
 */
export async function backupState(state: Config['state'], to: string | undefined, now: Date): Promise<string> {
  if (to !== undefined && (await pathExists(to))) {
    throw new UsageError('BACKUP_TARGET_EXISTS', `${to} already exists: a backup is written to a new file; give --to another name, or remove that file first`);
  }
  if (state.backend === 'postgres') {
    const file = to ?? defaultBackupPath(state.dir, now, false, 'dump');
    await (await postgresDump()).dumpPostgres(postgresOfState(state), file);
    return file;
  }
  const file = to ?? defaultBackupPath(state.dir, now);
  await backupSqlite(databasePath(state.dir), file);
  return file;
}

/**
 * Puts the backup `file` in place of the state (the caller made sure no agent runs). Returns where the state is and,
 * for SQLite, where the state it replaced was kept (a backup beside the others: `state restore` of that file undoes
 * the restore). PostgreSQL's restore replaces the agent's schema; a `state backup` before it keeps the old one.
 */
export async function restoreState(state: Config['state'], file: string, now: Date): Promise<{ readonly location: string; readonly kept: string | null }> {
  if (state.backend === 'postgres') {
    const postgres = postgresOfState(state);
    await (await postgresDump()).restorePostgres(postgres, file);
    return { location: describeLocation(postgres), kept: null };
  }
  const path = databasePath(state.dir);
  const { kept } = await restoreSqlite(file, path, defaultBackupPath(state.dir, now).replace(/\.db$/, '-replaced.db'));
  return { location: path, kept };
}
