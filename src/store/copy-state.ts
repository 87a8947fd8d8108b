/**
 * Copying a whole state into an empty one on another backend (`pricing-agent state migrate --to postgres`): every
 * table, every row with its ids and seqs as they are, and the database id, so that a running site moves without
 * re-sending or re-acknowledging anything and its POS systems keep their feed offsets.
 *
 * The tables and columns come from the two databases' catalogs (schema-info.ts): a table that both backends'
 * migrations create is copied without being listed here. Tables are copied parents first (foreign keys), rows in
 * primary-key order, in batches read from one snapshot of the source. The whole copy is ONE transaction of the
 * target: if anything fails (or the process dies), the target is left as empty as it was, and the copy can simply
 * be run again. The source is only read. Values go across as the agent reads them: integers exactly (64-bit key
 * hashes included, SqlDb.batches), and a column the backends store in different forms (CONVERTED) in the target's.
 */
import { RECORD_FIELD_COLUMNS, recordFieldsOf } from './approved-prices.ts';
import { StoreError } from './errors.ts';
import { dataColumns, listTables, primaryKey, referencedTables, resetIdentities } from './schema-info.ts';
import { restoredPlatformId } from './delta-state.ts';
import type { Dialect } from './dialect.ts';
import { sqlOf, type SqlDb, type SqlParams, type SqlValue, type Tx } from './sql-db.ts';
import type { StateDb } from './state-db.ts';

export interface CopiedTable {
  table: string;
  rows: number;
}

export interface CopyOptions {
  /** Rows per read and per insert. */
  batchSize?: number;
  /** Called after each table. */
  onTable?: (copied: CopiedTable) => void;
}

/**
 * Tables that must come after others they have no foreign key to: consumer offsets are checked against the feed's
 * last seq by a trigger, so the feed goes first.
 */
const COPY_LAST = new Set(['consumer_offsets']);

/**
 * Columns one backend stores and the other computes when read (approved_prices' record fields: VIRTUAL on SQLite,
 * stored on PostgreSQL since migration 0011): never read from the source, and filled from the row's other columns
 * where the target stores them, exactly as the agent fills them when it stores a version there.
 */
const DERIVED: Readonly<Record<string, { readonly columns: readonly string[]; values(row: Record<string, unknown>): SqlParams }>> = {
  approved_prices: { columns: RECORD_FIELD_COLUMNS, values: (row) => recordFieldsOf(String(row['record'])) },
};

/**
 * Columns the two backends store in different forms: each value is stored again the way the agent stores it on the
 * target, by the rule of the module that owns the column. A platform id that is a UUID is 16 bytes on SQLite and text
 * on PostgreSQL (delta-state.ts); sent as it was read, the bytes were refused as "invalid byte sequence for encoding
 * UTF8".
 */
const CONVERTED: Readonly<Record<string, Readonly<Record<string, (value: unknown, dialect: Dialect) => SqlValue>>>> = {
  delta_keys: { platform_id: restoredPlatformId },
};

/** agent_meta is copied over the target's own rows (its fresh database_id must not survive). */
const META = 'agent_meta';

/**
 * Copies every row of `from` into `to`, which must hold nothing yet (a freshly migrated schema).
 * @throws StoreError TARGET_NOT_EMPTY, SCHEMA_MISMATCH; the target is unchanged then.
 */
export async function copyState(from: StateDb, to: StateDb, options: CopyOptions = {}): Promise<CopiedTable[]> {
  const source = sqlOf(from);
  const target = sqlOf(to);
  const batchSize = options.batchSize ?? 2000;
  const tables = await copyOrder(source, target);
  return target.write(async (tx) => {
    for (const table of tables) {
      if (table === META) continue;
      const rows = await tx.value<number>(`SELECT count(*) FROM ${table}`);
      if (rows !== 0) {
        throw new StoreError('TARGET_NOT_EMPTY', `${to.location} is not empty (${table} has ${rows} rows): copy into a new, empty schema`);
      }
    }
    const copied: CopiedTable[] = [];
    for (const table of tables) {
      const derived = DERIVED[table];
      const columns = (await dataColumns(source, table)).filter((c) => !derived?.columns.includes(c));
      const targetColumns = await dataColumns(tx, table);
      const filled = derived !== undefined && derived.columns.every((c) => targetColumns.includes(c)) ? derived : undefined;
      const insert = { table, columns: [...columns, ...(filled?.columns ?? [])] };
      if (table === META) await tx.run(`DELETE FROM ${META}`);
      const order = (await primaryKey(source, table)).join(', ') || columns.join(', ');
      const convert = columns.map((c) => CONVERTED[table]?.[c]);
      const valueOf = (row: Record<string, unknown>, column: string, i: number): SqlValue => {
        const restore = convert[i];
        return restore === undefined ? (row[column] as SqlValue) : restore(row[column], tx.dialect);
      };
      let rows = 0;
      for await (const batch of source.batches<Record<string, unknown>>(`SELECT ${columns.join(', ')} FROM ${table} ORDER BY ${order}`, [], batchSize)) {
        await tx.insert(insert, batch.map((row) => [...columns.map((c, i) => valueOf(row, c, i)), ...(filled?.values(row) ?? [])]));
        rows += batch.length;
      }
      if (table === META) await recordMigration(tx, from.location);
      const entry = { table, rows };
      copied.push(entry);
      options.onTable?.(entry);
    }
    await resetIdentities(tx);
    return copied;
  });
}

/** Notes in agent_meta where the state came from (the database_id stays the source's). */
async function recordMigration(tx: Tx, from: string): Promise<void> {
  await tx.insert(
    { table: META, columns: ['key', 'value'], onConflict: { target: ['key'], update: ['value'] } },
    [
      ['migrated_from', from],
      ['migrated_at', tx.now],
    ],
  );
}

/** The source's tables, parents before children; each must exist in the target with the same data columns. */
async function copyOrder(source: SqlDb, target: SqlDb): Promise<string[]> {
  const tables = await listTables(source);
  const targetTables = new Set(await listTables(target));
  for (const table of tables) {
    if (!targetTables.has(table)) {
      throw new StoreError('SCHEMA_MISMATCH', `${target.location} has no table ${table}: both sides must run the same agent version`);
    }
    const derived = DERIVED[table]?.columns ?? [];
    const kept = (columns: string[]): string => columns.filter((c) => !derived.includes(c)).sort().join();
    const [a, b] = [await dataColumns(source, table), await dataColumns(target, table)];
    if (kept(a) !== kept(b)) {
      throw new StoreError('SCHEMA_MISMATCH', `${table} has columns ${a.join(', ')} here and ${b.join(', ')} there: both sides must run the same agent version`);
    }
  }
  const parents = new Map<string, string[]>();
  for (const table of tables) parents.set(table, (await referencedTables(source, table)).filter((p) => p !== table));
  const ordered: string[] = [];
  const visit = (table: string, path: Set<string>): void => {
    if (ordered.includes(table)) return;
    if (path.has(table)) throw new StoreError('SCHEMA_MISMATCH', `foreign keys form a cycle through ${table}`);
    path.add(table);
    for (const parent of parents.get(table) ?? []) visit(parent, path);
    path.delete(table);
    ordered.push(table);
  };
  for (const table of tables.filter((t) => !COPY_LAST.has(t))) visit(table, new Set());
  for (const table of tables.filter((t) => COPY_LAST.has(t))) visit(table, new Set());
  return ordered;
}
