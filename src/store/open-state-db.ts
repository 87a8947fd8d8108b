/**
 * Opening the state for the configured backend. The only place above the backends that names them: everything else
 * gets a StateDb and the functions of the table families.
 */
import type { Config } from '../config/index.ts';
import { StoreError } from './errors.ts';
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
}

/** Opens (creating and migrating it, unless read-only) the state of `state` (the config's `state:` section). */
export async function openStateDb(state: Config['state'], options: OpenStateOptions = {}): Promise<StateDb> {
  return openSqlite(databasePath(state.dir), {
    ...(options.readonly === undefined ? {} : { readonly: options.readonly }),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
}

/** The state's location for messages (before it is opened): the SQLite file. */
export function stateLocation(state: Config['state']): string {
  return databasePath(state.dir);
}

/** True for the error of a read-only open that found no state yet. */
export function isMissingState(error: unknown): boolean {
  return error instanceof StoreError && error.code === 'MISSING';
}
