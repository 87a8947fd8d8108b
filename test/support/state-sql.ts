/**
 * Raw SQL on a state database, for tests that look behind the store's functions (what a POS sees, what a crash
 * left). The SQL must run on every backend the test runs on (`?` placeholders; see src/store/sql-db.ts).
 */
import { sqlOf, type SqlParams } from '../../src/store/sql-db.ts';
import type { StateDb } from '../../src/store/state-db.ts';

export function sqlRows<R = Record<string, unknown>>(db: StateDb, sql: string, params: SqlParams = []): Promise<R[]> {
  return sqlOf(db).all<R>(sql, params);
}

export function sqlRow<R = Record<string, unknown>>(db: StateDb, sql: string, params: SqlParams = []): Promise<R | undefined> {
  return sqlOf(db).get<R>(sql, params);
}

/** The first column of the first row. */
export function sqlValue<V = unknown>(db: StateDb, sql: string, params: SqlParams = []): Promise<V | undefined> {
  return sqlOf(db).value<V>(sql, params);
}

/** The first column of every row. */
export async function sqlColumn<V = unknown>(db: StateDb, sql: string, params: SqlParams = []): Promise<V[]> {
  const rows = await sqlOf(db).all<Record<string, V>>(sql, params);
  return rows.map((row) => Object.values(row)[0] as V);
}

/** One statement in a transaction of its own; resolves to the rows it changed. */
export function sqlRun(db: StateDb, sql: string, params: SqlParams = []): Promise<number> {
  return sqlOf(db).write((tx) => tx.run(sql, params));
}
