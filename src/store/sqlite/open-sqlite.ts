/**
 * Opening the SQLite state database: file permissions, pragmas on every open, migrations (through Kysely, on the
 * same connection, before anything else uses it).
 *
 * Every pragma is set explicitly on every open, because SQLite does not keep all of them in the file: the
 * effective `synchronous` of a WAL database changes after a reopen ([seen], library notes). synchronous=FULL because
 * the agent acknowledges approvals to the platform right after committing them: with NORMAL, a power loss could
 * lose commits that were already acknowledged, and the platform would never send those prices again.
 */
import { accessSync, chmodSync, closeSync, constants, openSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, Kysely, SqliteAdapter, SqliteDialect, SqliteDriver, sql, type DatabaseConnection, type DialectAdapter, type Driver, type SqliteDialectConfig } from 'kysely';
import { makeStateDir, StoreError } from '../errors.ts';
import type { Database } from '../schema.ts';
import { migrateToLatest } from '../migrate.ts';
import { AGENT_VERSION } from '../../version.ts';
import { hasPendingMigrations, tooNewMessage, unknownMigrations, WRITTEN_BY_KEY } from '../upgrade-safety.ts';
import { automaticBackup, stateFacts } from './backup.ts';
import { SQLITE_MIGRATIONS } from '../migration-list.ts';
import { SqliteDb } from './sqlite-db.ts';

export interface SqliteOptions {
  /** Open for reading only: no file creation, no migrations, no writes (the CLI's read commands, tests). */
  readonly?: boolean;
  /**
   * Permission bits of a newly created database file, before the umask (0o600, 0o640 or 0o660). SQLite gives the
   * -wal and -shm files the same bits. A POS user reading through SQLite needs write access to -shm, so a POS in
   * the agent's group needs 0o660. World bits are refused.
   */
  fileMode?: number;
  /** How long a statement waits for a lock held by another process. */
  busyTimeoutMs?: number;
  /** The WAL file is truncated back to this size after a checkpoint resets it. */
  journalSizeLimitBytes?: number;
  /** Milliseconds since the epoch; the project's Clock.now. */
  now?: () => number;
  /** Called with the file of the automatic backup taken before this open migrated an existing state (to log it). */
  onBackup?: (file: string) => void;
}

/** File name of the state database inside the configured `state.dir`. */
export const DATABASE_FILE = 'pricing-agent.db';

/** `<stateDir>/pricing-agent.db`: the one place that names the file (daemon, CLI and docs/outbox.md agree). */
export function databasePath(stateDir: string): string {
  return join(stateDir, DATABASE_FILE);
}

/**
 * SQLite runs DDL inside transactions, but Kysely's SQLite adapter says it does not, so its Migrator ran each
 * migration's statements, and the row that records the migration, outside any transaction: a process killed in the
 * middle of a migration (systemd's stop timeout, a SIGKILL at the first start) left tables of a migration that was
 * not recorded, and every later start failed with "table ... already exists" (found by the chaos suite). With this
 * adapter the Migrator runs all pending migrations and their records in one transaction: after a kill the database
 * is as it was before, and the next start migrates again.
 */
class TransactionalDdlAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

/**
 * The migrations' transaction begins IMMEDIATE: it takes the write lock first, waiting for it (busy_timeout) while
 * another process migrates the same state. Kysely's `begin` is deferred: its first read took a snapshot, its first
 * write then found the other process's commit and failed at once with "database is locked" (SQLite cannot wait
 * there), so two agents started together on a new state failed one of them (test/store/concurrent-open.test.ts).
 */
class ImmediateTransactionsDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

export class StateDialect extends SqliteDialect {
  readonly #settings: SqliteDialectConfig;

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#settings = config;
  }

  override createAdapter(): DialectAdapter {
    return new TransactionalDdlAdapter();
  }

  override createDriver(): Driver {
    return new ImmediateTransactionsDriver(this.#settings);
  }
}

const DEFAULTS = {
  fileMode: 0o640,
  busyTimeoutMs: 5 * 1000, // 5 s
  journalSizeLimitBytes: 64 * 1024 * 1024, // 64 MiB
};

/**
 * Opens (creating if needed, unless read-only) and migrates the database at `path`. Throws a StoreError with code
 * OPEN_FAILED, PRAGMA_NOT_EFFECTIVE, MIGRATION_FAILED, STATE_TOO_NEW (a newer agent migrated it) or
 * NOT_INITIALIZED; the connection is closed on failure.
 */
export async function openSqlite(path: string, options: SqliteOptions = {}): Promise<SqliteDb> {
  const readonly = options.readonly ?? false;
  const fileMode = options.fileMode ?? DEFAULTS.fileMode;
  if ((fileMode & 0o007) !== 0 || (fileMode & ~0o777) !== 0) {
    const octal = fileMode.toString(8);
    throw new StoreError('INVALID_ARGUMENT', `fileMode ${octal}: the database must not be world-accessible`);
  }
  if (!readonly) prepareFiles(path, fileMode);
  requireAccess(path, readonly);

  let sqlite: BetterSqlite3.Database;
  try {
    sqlite = new BetterSqlite3(path, { readonly, fileMustExist: true });
  } catch (error) {
    throw new StoreError('OPEN_FAILED', `cannot open database ${path}: ${(error as Error).message}`, { cause: error });
  }
  const journalSizeLimitBytes = options.journalSizeLimitBytes ?? DEFAULTS.journalSizeLimitBytes;
  // Relaxed commits let the WAL grow to its size limit before they checkpoint it (sqlite-db.ts).
  const db = new SqliteDb({ path, readonly, sqlite, now: options.now ?? Date.now, relaxedCheckpointBytes: journalSizeLimitBytes });
  try {
    applyPragmas(sqlite, readonly, { busyTimeoutMs: options.busyTimeoutMs ?? DEFAULTS.busyTimeoutMs, journalSizeLimitBytes });
    // Kysely only runs the migrations (its migrator keeps their bookkeeping); the families use the connection
    // directly. Not destroyed afterwards: destroying a SqliteDialect closes the connection.
    const kysely = new Kysely<Database>({ dialect: new StateDialect({ database: sqlite }) });
    if (readonly) await requireInitialized(kysely, path);
    else await migrateWithBackup(kysely, sqlite, path, options);
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
  return db;
}

/**
 * A state migrated by a newer agent is refused before anything touches it. An existing state that this build
 * would migrate is first copied to `<state dir>/backups/` (the way back if the new version must be rolled back),
 * and the version that migrated it is kept in agent_meta, so that an older agent can say who wrote it.
 */
async function migrateWithBackup(kysely: Kysely<Database>, sqlite: BetterSqlite3.Database, path: string, options: SqliteOptions): Promise<void> {
  const facts = stateFacts(sqlite);
  if (facts !== null && unknownMigrations(facts, SQLITE_MIGRATIONS).length > 0) throw new StoreError('STATE_TOO_NEW', tooNewMessage(path, facts, SQLITE_MIGRATIONS, dirname(path)));
  if (facts !== null && hasPendingMigrations(facts, SQLITE_MIGRATIONS)) {
    const file = await automaticBackup(path, new Date((options.now ?? Date.now)()));
    options.onBackup?.(file);
  }
  const ran = await migrateToLatest(kysely, SQLITE_MIGRATIONS);
  if (ran.length > 0) {
    sqlite
      .prepare('INSERT INTO agent_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value')
      .run(WRITTEN_BY_KEY, AGENT_VERSION);
  }
}

/**
 * The database is there and this user may read it (and write it, unless read-only). An operator running `status` or
 * `files retry` as another user than the agent's was told "the agent has not run" (a folder it may not enter looks
 * empty), or got SQLite's "attempt to write a readonly database".
 */
function requireAccess(path: string, readonly: boolean): void {
  try {
    accessSync(path, readonly ? constants.R_OK : constants.R_OK | constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new StoreError('MISSING', `no state database at ${path} yet: the agent has not run with this state.dir`);
    const what = readonly ? 'read' : 'write';
    throw new StoreError('OPEN_FAILED', `cannot ${what} the state database ${path} (${code ?? 'error'}): run the command as the agent's user (sudo -u pricing-agent ...)${readonly ? ', or as a member of its group' : ''}`, { cause: error });
  }
}

/** Creates the directory and an empty file with `fileMode` (minus the umask); removes world bits from old files. */
function prepareFiles(path: string, fileMode: number): void {
  makeStateDir(dirname(path));
  try {
    closeSync(openSync(path, 'wx', fileMode)); // an empty file is a valid empty database
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      const message = `cannot create database ${path}: ${(error as Error).message}`;
      throw new StoreError('OPEN_FAILED', message, { cause: error });
    }
  }
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    let mode: number;
    try {
      mode = statSync(file).mode & 0o777;
    } catch {
      continue; // -wal and -shm exist only while (or after) a connection is open
    }
    if ((mode & 0o007) !== 0) chmodSync(file, mode & ~0o007);
  }
}

function applyPragmas(
  sqlite: BetterSqlite3.Database,
  readonly: boolean,
  values: { busyTimeoutMs: number; journalSizeLimitBytes: number },
): void {
  // busy_timeout first, so that switching to WAL waits for another process's lock instead of failing.
  const busyTimeout = Math.trunc(values.busyTimeoutMs);
  const journalSizeLimit = Math.trunc(values.journalSizeLimitBytes);
  expectPragma(sqlite, `busy_timeout = ${busyTimeout}`, 'busy_timeout', busyTimeout);
  // A read-only connection cannot switch the journal mode: it requires that the agent already did.
  if (readonly) expectPragma(sqlite, null, 'journal_mode', 'wal');
  else expectPragma(sqlite, 'journal_mode = WAL', 'journal_mode', 'wal');
  expectPragma(sqlite, 'synchronous = FULL', 'synchronous', 2);
  expectPragma(sqlite, `journal_size_limit = ${journalSizeLimit}`, 'journal_size_limit', journalSizeLimit);
  expectPragma(sqlite, 'foreign_keys = ON', 'foreign_keys', 1);
}

/** Sets a pragma (unless `set` is null) and reads it back: a pragma SQLite ignored is an error, not a surprise. */
function expectPragma(
  sqlite: BetterSqlite3.Database,
  set: string | null,
  name: string,
  expected: string | number,
): void {
  if (set !== null) sqlite.pragma(set);
  const actual = sqlite.pragma(name, { simple: true });
  if (actual !== expected) {
    const hint = name === 'journal_mode' ? ' (WAL needs a local filesystem; network shares are not supported)' : '';
    throw new StoreError('PRAGMA_NOT_EFFECTIVE', `pragma ${name} is ${String(actual)}, expected ${expected}${hint}`);
  }
}

async function requireInitialized(kysely: Kysely<Database>, path: string): Promise<void> {
  const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM sqlite_schema
    WHERE type = 'table' AND name IN ('agent_meta', 'price_feed')`.execute(kysely);
  if (rows[0]?.n !== 2) {
    throw new StoreError('NOT_INITIALIZED', `${path} was not created by pricing-agent (run the agent once first)`);
  }
}
