/**
 * Regression (found by the chaos suite, with issue 11's migration 0005): Kysely's Migrator ran SQLite migrations
 * outside any transaction (its SQLite adapter says DDL is not transactional, though SQLite's is). A daemon killed
 * during its first start's migrations left the tables of a migration that was not recorded, and every later start
 * failed with "table delivery_intents already exists": the agent never started again. The state database now runs
 * all pending migrations in one transaction; a migration cut in the middle leaves nothing behind.
 */
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { expect, it } from 'vitest';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { SQLITE_MIGRATIONS as MIGRATIONS } from '../../src/store/migration-list.ts';
import { openSqlite as openDatabase, StateDialect } from '../../src/store/sqlite/open-sqlite.ts';
import { tempDir } from '../store/support.ts';

it('a migration that stops half-way leaves the database as it was, and the next open migrates it whole', async () => {
  const path = join(tempDir(), 'state.db');
  const sqlite = new BetterSqlite3(path);
  sqlite.pragma('journal_mode = WAL');
  const kysely = new Kysely({ dialect: new StateDialect({ database: sqlite }) });
  // The real migrations, with the process "killed" in the middle of the last one's statements.
  const cut: Migration = {
    async up(db) {
      await sql`CREATE TABLE half_done (id INTEGER)`.execute(db);
      throw new Error('killed');
    },
  };
  await expect(migrateToLatest(kysely, { ...MIGRATIONS, '9999_cut': cut })).rejects.toThrow(/killed/);
  await kysely.destroy(); // closes the connection, as the killed process's would be
  const after = new BetterSqlite3(path);
  const tables = after.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite%'`).pluck().all();
  expect(tables.filter((t) => !String(t).startsWith('kysely_'))).toEqual([]);
  after.close();

  const db = await openDatabase(path);
  expect(db.sqlite.prepare('SELECT name FROM kysely_migration ORDER BY name').pluck().all()).toEqual(Object.keys(MIGRATIONS).sort());
  await db.close();
});
