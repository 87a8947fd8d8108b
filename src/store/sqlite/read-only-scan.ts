/**
 * A read-only connection of its own to a SQLite state file, for a thread other than the one holding the agent's
 * connection (delta push's second half reads the remembered keys while the main thread merges: store/delta-state.ts
 * scanDeltaKeys). Its reads run in one read transaction: one snapshot until `close`.
 */
import BetterSqlite3 from 'better-sqlite3';

export interface ReadOnlySqlite {
  all<R>(sql: string, params: readonly unknown[]): R[];
  /** The rows as arrays of their columns' values (no object per row). */
  raw<R extends unknown[]>(sql: string, params: readonly unknown[]): R[];
  close(): void;
}

export function openReadOnlySqlite(path: string): ReadOnlySqlite {
  const db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
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
