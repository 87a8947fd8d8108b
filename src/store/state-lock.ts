/**
 * The state's lock: at most one daemon runs on a state, and nothing replaces it under one. SQLite: a system file
 * lock held while the daemon runs (sqlite/state-lock.ts). PostgreSQL: none here; two nodes on one schema are an HA
 * pair, and the lease decides which one works (store/postgres, docs/ha.md).
 */
import type { Config } from '../config/index.ts';
import { makeStateDir } from './errors.ts';
import { lockSqliteState } from './sqlite/state-lock.ts';

/** Takes the lock, or throws StoreError IN_USE saying `advice` (what to do about the other agent); returns its release. */
export function lockState(state: Config['state'], advice: string): () => void {
  if (state.backend !== 'sqlite') return () => undefined;
  makeStateDir(state.dir);
  return lockSqliteState(state.dir, advice);
}
