/**
 * Opening the state for the configured backend (`state.backend`). The only place above the backends that names
 * them: everything else gets a StateDb and the functions of the table families.
 */
import type { Config } from '../config/index.ts';
import { makeStateDir, StoreError } from './errors.ts';
import { describeLocation, postgresOfState } from './postgres/location.ts';
import { databasePath, openSqlite } from './sqlite/open-sqlite.ts';
import type { StateDb } from './state-db.ts';

export interface OpenStateOptions {
  /**
   * Read only: nothing is created, migrated or written (status, files, outbox commands beside a running daemon).
   * Throws StoreError MISSING when the agent has not created its state yet.
   */
  readonly?: boolean;
  /** Milliseconds since the epoch; the project's Clock.now. */
  now?: () => number;
  /** A connection of the pool failed while idle (PostgreSQL restarted or went away); it is replaced. */
  onConnectionError?: (error: Error) => void;
  /**
   * PostgreSQL: PostgreSQL ends a session idle inside a transaction for this long (ms). HA sets it below the lease,
   * so that a node frozen inside a transaction cannot hold a takeover back for longer (library notes).
   */
  idleInTransactionTimeoutMs?: number;
  /**
   * The automatic backup taken before this open migrated the state (docs/upgrade.md). Without it the file is named
   * on stderr, so that a one-shot command's upgrade names its backup too.
   */
  onBackup?: (file: string) => void;
  /** PostgreSQL: why no automatic backup could be taken before this open migrated the state (default: on stderr). */
  onNoBackup?: (why: string) => void;
}

/** Opens (creating and migrating it, unless read-only) the state of `state` (the config's `state:` section). */
export async function openStateDb(state: Config['state'], options: OpenStateOptions = {}): Promise<StateDb> {
  const common = {
    ...(options.readonly === undefined ? {} : { readonly: options.readonly }),
    ...(options.now === undefined ? {} : { now: options.now }),
  };
  const onBackup = options.onBackup ?? ((file: string) => process.stderr.write(`the state is upgraded: a backup of it was written to ${file}\n`));
  if (state.backend === 'postgres') {
    const postgres = postgresOfState(state);
    const onNoBackup = options.onNoBackup ?? ((why: string) => process.stderr.write(`the state is upgraded without a backup: ${why}\n`));
    // This node's own files (per-store exports, temporary files) stay in state.dir: it exists as with SQLite.
    if (options.readonly !== true) makeStateDir(state.dir);
    // Loaded here: a command on SQLite state never loads the PostgreSQL driver.
    const { openPostgres } = await import('./postgres/open-postgres.ts');
    return openPostgres(postgres, {
      ...common,
      ...(options.onConnectionError ? { onIdleError: options.onConnectionError } : {}),
      ...(options.idleInTransactionTimeoutMs === undefined ? {} : { idleInTransactionTimeoutMs: options.idleInTransactionTimeoutMs }),
      upgrade: { stateDir: state.dir, onBackup, onNoBackup },
    });
  }
  return openSqlite(databasePath(state.dir), { ...common, onBackup });
}

/** The state's location for messages (before it is opened): the SQLite file, or the PostgreSQL URL and schema. */
export function stateLocation(state: Config['state']): string {
  return state.backend === 'postgres' ? describeLocation(postgresOfState(state)) : databasePath(state.dir);
}

/** True for the error of a read-only open that found no state yet. */
export function isMissingState(error: unknown): boolean {
  return error instanceof StoreError && error.code === 'MISSING';
}
