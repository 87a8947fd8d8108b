/**
 * One daemon per SQLite state. The daemon holds an exclusive transaction on a small database of its own beside the
 * state (`pricing-agent.lock`) for as long as it runs. SQLite's locks are the system's file locks: the kernel drops
 * them when the process ends, SIGKILL and power loss included, so a crash never leaves a lock to clear by hand and
 * a reused pid cannot hold one. A second daemon (another config on the same state.dir, another http.port) and
 * `state restore` find it taken.
 */
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { StoreError } from '../errors.ts';

export const LOCK_FILE = 'pricing-agent.lock';

/** Takes the state's lock, or throws StoreError IN_USE (with `advice`) when another process holds it; returns its release. */
export function lockSqliteState(stateDir: string, advice: string): () => void {
  const path = join(stateDir, LOCK_FILE);
  // Made with the state's mode (SQLite would make it 0644 minus the umask): no file of the agent is world-readable.
  try {
    closeSync(openSync(path, 'wx', 0o640));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const lock = new BetterSqlite3(path, { timeout: 0 });
  try {
    lock.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    lock.close();
    if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
    throw new StoreError('IN_USE', `another pricing-agent runs on state.dir ${stateDir}: ${advice}`, { cause: error });
  }
  // The caller keeps this function (and through it the connection) until it releases: a connection nothing refers
  // to may be closed by the garbage collector, and the lock with it.
  return () => {
    if (lock.open) lock.close(); // ends the transaction, and with it the lock
  };
}
