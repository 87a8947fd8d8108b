/**
 * A read-only connection of its own to a SQLite state file, for a thread other than the one holding the agent's
 * connection (delta push's second half reads the remembered keys while the main thread merges: store/delta-state.ts
 * scanDeltaKeys). Its reads run in one read transaction: one snapshot until `close`.
 */
import BetterSqlite3 from 'better-sqlite3';

export interface ReadOnlySqlite {
  all<R>(sql: string, params: readonly unknown[]): R[];
  close(): void;
}

export function openReadOnlySqlite(path: string): ReadOnlySqlite {
  const db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  const statements = new Map<string, BetterSqlite3.Statement<unknown[], unknown>>();
  db.prepare('BEGIN').run();
  return {
    all<R>(sql: string, params: readonly unknown[]): R[] {
      let statement = statements.get(sql);
      if (statement === undefined) {
        statement = db.prepare<unknown[], unknown>(sql);
        statements.set(sql, statement);
      }
      return statement.all(...params) as R[];
    },
    close() {
      if (db.inTransaction) db.prepare('COMMIT').run();
      db.close();
    },
  };
}
