/**
 * A read-only connection of its own to a SQLite state file, for a thread other than the one holding the agent's
 * connection (delta push's second half reads the remembered keys while the main thread merges: store/delta-state.ts
 * scanDeltaKeys). Its reads run in one read transaction: one snapshot, from its first read until `close`.
 */
import BetterSqlite3 from 'better-sqlite3';

/**
 * The page cache of such a connection, in KiB (SQLite's `cache_size`; negative: KiB). better-sqlite3 builds SQLite
 * with a default of 16,000 KiB per connection, and a scan of the keys in order reads each leaf page once: with the
 * default, each of the two scans of a large file's comparison (one per thread) filled 16 MB of cache it never read
 * again, so the process's peak memory grew with the number of remembered keys until both caches were full (a quarter
 * of a million keys filled 7 MB of each). A paged query walks from the root to the next leaf: the root and the
 * interior pages above the current leaves are all it reads again (190 interior pages for a million keys, each used
 * for a stretch of pages and then no more). Measured on the bench's state of a million keys: a scan as fast with
 * 1 MiB (430-470 ms alone; two halves at once on two threads no slower), and 24 MB of RSS for it instead of 44.
 */
const SCAN_CACHE_KIB = 1024;

export interface ReadOnlySqlite {
  all<R>(sql: string, params: readonly unknown[]): R[];
  /** The rows as arrays of their columns' values (no object per row). */
  raw<R extends unknown[]>(sql: string, params: readonly unknown[]): R[];
  close(): void;
}

export function openReadOnlySqlite(path: string): ReadOnlySqlite {
  const db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  db.pragma(`cache_size = -${SCAN_CACHE_KIB}`);
  const statements = new Map<string, BetterSqlite3.Statement<unknown[], unknown>>();
  const rawStatements = new Map<string, BetterSqlite3.Statement<unknown[], unknown>>();
  const statement = (sql: string, raw: boolean) => {
    const cache = raw ? rawStatements : statements;
    let prepared = cache.get(sql);
    if (prepared === undefined) {
      prepared = db.prepare<unknown[], unknown>(sql).raw(raw);
      cache.set(sql, prepared);
    }
    return prepared;
  };
  db.prepare('BEGIN').run();
  return {
    all<R>(sql: string, params: readonly unknown[]): R[] {
      return statement(sql, false).all(...params) as R[];
    },
    raw<R extends unknown[]>(sql: string, params: readonly unknown[]): R[] {
      return statement(sql, true).all(...params) as R[];
    },
    close() {
      if (db.inTransaction) db.prepare('COMMIT').run();
      db.close();
    },
  };
}
