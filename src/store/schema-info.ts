/**
 * What the schema of a state database holds, read from the database's own catalog: its tables, the columns a copy
 * writes (not generated ones), the tables each references, and the identity columns whose sequence must move past
 * copied ids. For copying a state between backends (copy-state.ts) without a second list of the tables to keep up.
 */
import type { Queryable } from './sql-db.ts';

/** The agent's tables, without the migrator's bookkeeping. */
export async function listTables(q: Queryable): Promise<string[]> {
  const rows = await q.all<{ name: string }>(q.dialect.catalog.tables);
  return rows.map((r) => r.name).filter((name) => !name.startsWith('kysely_migration'));
}

/** The columns of `table` that hold data (generated ones are left out), in their order. */
export async function dataColumns(q: Queryable, table: string): Promise<string[]> {
  return (await q.all<{ name: string }>(q.dialect.catalog.dataColumns, [table])).map((r) => r.name);
}

/** The tables `table` has foreign keys to (itself included when it references its own rows). */
export async function referencedTables(q: Queryable, table: string): Promise<string[]> {
  return (await q.all<{ name: string }>(q.dialect.catalog.referencedTables, [table])).map((r) => r.name);
}

/** The primary key columns of `table`, in key order (to copy rows in key order). */
export async function primaryKey(q: Queryable, table: string): Promise<string[]> {
  return (await q.all<{ name: string }>(q.dialect.catalog.primaryKey, [table])).map((r) => r.name);
}

/**
 * Moves the sequences of identity columns past the largest value copied in, so that the next row gets the next id
 * or seq (PostgreSQL; SQLite's AUTOINCREMENT keeps up by itself).
 */
export async function resetIdentities(q: Queryable): Promise<void> {
  const query = q.dialect.catalog.identityColumns;
  if (query === null) return;
  const columns = await q.all<{ table_name: string; column_name: string }>(query);
  for (const { table_name: table, column_name: column } of columns) {
    await q.value(
      `SELECT setval(pg_get_serial_sequence(?, ?), coalesce(max(${column}), 1), max(${column}) IS NOT NULL) FROM ${table}`,
      [table, column],
    );
  }
}
