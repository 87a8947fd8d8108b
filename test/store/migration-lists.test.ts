/**
 * The two backends' migrations are two lists that must describe one schema: the same names in the same order (a
 * state copied between backends, or an agent that reads which migrations ran, counts on it), and the same tables
 * with the same columns once applied. A migration added to one list only, or a column added on one side only, fails
 * here. The one documented difference: PostgreSQL stores approved_prices' record fields as plain columns the writer
 * fills, where SQLite computes them (Dialect.recordFieldsStored; generated columns are not data columns).
 */
import { describe, expect, it } from 'vitest';
import { RECORD_FIELD_COLUMNS } from '../../src/store/approved-prices.ts';
import { POSTGRES_MIGRATIONS } from '../../src/store/migration-list.ts';
import { dataColumns, listTables } from '../../src/store/schema-info.ts';
import { SQLITE_MIGRATIONS } from '../../src/store/migration-list.ts';
import type { SqlDb } from '../../src/store/sql-db.ts';
import type { StateDb } from '../../src/store/state-db.ts';
import { TEST_BACKEND } from '../support/state-db.ts';
import { openTempDb, openTempSqlite } from './support.ts';

it('the two lists have the same names, in the same order', () => {
  expect(Object.keys(POSTGRES_MIGRATIONS)).toEqual(Object.keys(SQLITE_MIGRATIONS));
});

/** Each table with its data columns, sorted (column order differs where a migration added one to a rebuilt table). */
async function schemaOf(db: StateDb): Promise<Record<string, string[]>> {
  const q = db as SqlDb;
  const tables: Record<string, string[]> = {};
  for (const table of await listTables(q)) tables[table] = (await dataColumns(q, table)).sort();
  return tables;
}

describe.runIf(TEST_BACKEND === 'postgres')('applied', () => {
  it('they give the same tables with the same columns', async () => {
    const sqlite = await schemaOf(await openTempSqlite());
    const postgres = await schemaOf(await openTempDb());
    expect(Object.keys(postgres).sort()).toEqual(Object.keys(sqlite).sort());
    const stored = new Set<string>(RECORD_FIELD_COLUMNS);
    for (const [table, columns] of Object.entries(postgres)) {
      const comparable = table === 'approved_prices' ? columns.filter((c) => !stored.has(c)) : columns;
      expect(comparable, table).toEqual(sqlite[table]);
    }
  });
});
