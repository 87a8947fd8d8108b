/**
 * The state database of a test: opened in the test's own temp folder, with the test's clock.
 */
import { join } from 'node:path';
import { openSqlite } from '../../src/store/sqlite/open-sqlite.ts';
import type { StateDb } from '../../src/store/state-db.ts';

export interface TestDbOptions {
  readonly?: boolean;
  /** Milliseconds since the epoch (the test's clock). */
  now?: () => number;
}

/** Opens (creating and migrating it unless read-only) the state database kept in `dir`. */
export function openTestDb(dir: string, options: TestDbOptions = {}): Promise<StateDb> {
  return openSqlite(join(dir, 'state.db'), options);
}
