/**
 * What the schema of a state database holds, read from the database's own catalog: its tables, the columns a copy
 * writes (not generated ones), the tables each references, and the identity columns whose sequence must move past
 * copied ids. For copying a state between backends (copy-state.ts) without a second list of the tables to keep up.
 */
import type { Queryable } from './sql-db.ts';

/** The agent's tables, without the migrator's bookkeeping. */
export async function listTables(q: Queryable): Promise<string[]> {
  const sql =
    q.dialect.name === 'sqlite'
      ? `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`
      : `SELECT table_name AS name FROM information_schema.tables
         WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`;
  const rows = await q.all<{ name: string }>(sql);
  return rows.map((r) => r.name).filter((name) => !name.startsWith('kysely_migration'));
}

/** The columns of `table` that hold data (generated ones are left out), in their order. */
export async function dataColumns(q: Queryable, table: string): Promise<string[]> {
  const sql =
    q.dialect.name === 'sqlite'
      ? `SELECT name FROM pragma_table_xinfo(?) WHERE hidden = 0 ORDER BY cid` // hidden 2 and 3: generated
      : `SELECT column_name AS name FROM information_schema.columns
         WHERE table_schema = current_schema() AND table_name = ? AND is_generated = 'NEVER' ORDER BY ordinal_position`;
  return (await q.all<{ name: string }>(sql, [table])).map((r) => r.name);
}

/** The tables `table` has foreign keys to (itself included when it references its own rows). */
export async function referencedTables(q: Queryable, table: string): Promise<string[]> {
  const sql =
    q.dialect.name === 'sqlite'
      ? `SELECT DISTINCT "table" AS name FROM pragma_foreign_key_list(?)`
      : `SELECT DISTINCT r.relname AS name FROM pg_constraint c
           JOIN pg_class t ON t.oid = c.conrelid JOIN pg_class r ON r.oid = c.confrelid
           JOIN pg_namespace n ON n.oid = t.relnamespace
         WHERE c.contype = 'f' AND n.nspname = current_schema() AND t.relname = ?`;
  return (await q.all<{ name: string }>(sql, [table])).map((r) => r.name);
}

/** The primary key columns of `table`, in key order (to copy rows in key order). */
export async function primaryKey(q: Queryable, table: string): Promise<string[]> {
  const sql =
    q.dialect.name === 'sqlite'
      ? `SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk`
      : `SELECT a.attname AS name FROM pg_index i
           JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace
           JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) ON true
           JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
         WHERE i.indisprimary AND n.nspname = current_schema() AND t.relname = ? ORDER BY k.ord`;
  return (await q.all<{ name: string }>(sql, [table])).map((r) => r.name);
}

/**
 * Moves the sequences of identity columns past the largest value copied in, so that the next row gets the next id
 * or seq (PostgreSQL; SQLite's AUTOINCREMENT keeps up by itself).
 */
export async function resetIdentities(q: Queryable): Promise<void> {
  if (q.dialect.name === 'sqlite') return;
  const columns = await q.all<{ table_name: string; column_name: string }>(
    `SELECT table_name, column_name FROM information_schema.columns
     WHERE table_schema = current_schema() AND is_identity = 'YES'`,
  );
  for (const { table_name: table, column_name: column } of columns) {
    await q.value(
      `SELECT setval(pg_get_serial_sequence(?, ?), coalesce(max(${column}), 1), max(${column}) IS NOT NULL) FROM ${table}`,
      [table, column],
    );
  }
}
