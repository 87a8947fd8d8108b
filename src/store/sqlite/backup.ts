/**
 * Copies of the SQLite state: `state backup` while the agent runs, the automatic one before a start migrates the
 * state, and `state restore` while it is stopped. SQLite's online backup API copies a consistent snapshot page by
 * page while other connections keep writing; a plain file copy of a WAL database could take a torn state.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { StoreError } from '../errors.ts';
import { defaultBackupPath, pruneAutomaticBackups, tooNewMessage, unknownMigrations, WRITTEN_BY_KEY, type StateFacts } from '../upgrade-safety.ts';
import { SQLITE_MIGRATIONS } from '../migration-list.ts';

/**
 * Writes a consistent copy of the database at `path` to `to` (0600: it holds what the state holds). Written to a
 * temporary name and renamed, so a crash leaves no half copy under the final name.
 */
export async function backupSqlite(path: string, to: string): Promise<void> {
  if (!existsSync(path)) throw new StoreError('MISSING', `no state database at ${path} yet: the agent has not run with this state.dir`);
  mkdirSync(dirname(to), { recursive: true, mode: 0o750 });
  const partial = `${to}.partial`;
  const source = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  try {
    await source.backup(partial);
  } finally {
    source.close();
  }
  chmodSync(partial, 0o600);
  renameSync(partial, to);
}

/** The facts of an open connection; null when it is not a pricing-agent state (no agent_meta or migrations). */
export function stateFacts(sqlite: BetterSqlite3.Database): StateFacts | null {
  const tables = new Set(
    (sqlite.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table'`).all() as { name: string }[]).map((r) => r.name),
  );
  if (!tables.has('agent_meta') || !tables.has('kysely_migration')) return null;
  const applied = (sqlite.prepare('SELECT name FROM kysely_migration ORDER BY name').all() as { name: string }[]).map((r) => r.name);
  const row = sqlite.prepare('SELECT value FROM agent_meta WHERE key = ?').get(WRITTEN_BY_KEY) as { value: string } | undefined;
  return { applied, writtenBy: row?.value ?? null };
}

/**
 * Before a start migrates an existing state: a backup beside it, named in the caller's log, and only the newest
 * AUTOMATIC_BACKUPS_KEPT automatic ones kept (backups taken with `state backup` are never removed).
 */
export async function automaticBackup(path: string, now: Date): Promise<string> {
  const stateDir = dirname(path);
  const to = defaultBackupPath(stateDir, now, true);
  await backupSqlite(path, to);
  pruneAutomaticBackups(stateDir);
  return to;
}

/**
 * Puts the backup `file` in place of the database at `path` (the agent must be stopped: the caller checks).
 * Refuses a file that is not a pricing-agent state and one written by a newer agent. Once the file passed, the state
 * it replaces is copied to `keepCurrentAt` first (nothing of it is lost: the backup may be another installation's,
 * or older than what the tills were given), then the old database's -wal and -shm go with it: a WAL left beside
 * the restored file would be replayed into it. Returns where the replaced state was kept (null: there was none).
 */
export async function restoreSqlite(file: string, path: string, keepCurrentAt: string): Promise<{ readonly applied: number; readonly kept: string | null }> {
  let facts: StateFacts | null;
  try {
    const sqlite = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
    try {
      facts = stateFacts(sqlite);
    } finally {
      sqlite.close();
    }
  } catch (error) {
    throw new StoreError('OPEN_FAILED', `${file} is not a pricing-agent state (${(error as Error).message})`, { cause: error });
  }
  if (facts === null) throw new StoreError('OPEN_FAILED', `${file} is not a pricing-agent state: it has no agent_meta or migrations table`);
  if (unknownMigrations(facts, SQLITE_MIGRATIONS).length > 0) throw new StoreError('STATE_TOO_NEW', tooNewMessage(file, facts, SQLITE_MIGRATIONS, dirname(path)));
  const kept = existsSync(path) ? keepCurrentAt : null;
  if (kept !== null) await backupSqlite(path, kept);
  mkdirSync(dirname(path), { recursive: true, mode: 0o750 });
  const incoming = `${path}.restoring`;
  copyFileSync(file, incoming);
  // The state's own bits are kept (0o660 when a POS in the agent's group reads it); 0o640 for a new state.
  chmodSync(incoming, existsSync(path) ? statSync(path).mode & 0o770 : 0o640);
  rmSync(`${path}-wal`, { force: true });
  rmSync(`${path}-shm`, { force: true });
  renameSync(incoming, path);
  return { applied: facts.applied.length, kept };
}
