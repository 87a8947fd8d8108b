/**
 * 0012_json_compression (PostgreSQL): the JSON text columns that can outgrow PostgreSQL's 2 kB row threshold are
 * compressed with lz4 instead of the default pglz. A version of an approved price is about 1.9 kB with its record and
 * record fields; a third of them cross the threshold, and pglz compressing their record was 14 % of the server's CPU
 * while a deliveries page is stored (docs/performance.md, "The pull on PostgreSQL"). lz4 compresses several times
 * faster for about the same size. Values stored before keep their compression (PostgreSQL reads both).
 *
 * lz4 is an option of PostgreSQL's build (Debian's and the PGDG packages have it): a server built without it keeps
 * pglz, and the migration still succeeds. SQLite's 0012 changes nothing (it does not compress).
 */
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/** Table and JSON text columns. */
const COLUMNS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['approved_prices', ['record', 'trace', 'approval_details']],
  ['mirror_products', ['record']],
  ['mirror_product_store', ['record']],
  ['mirror_transactions', ['record']],
  ['mirror_competitor_prices', ['record']],
  ['mirror_grid_rows', ['record']],
];

export const migration0012JsonCompression: Migration = {
  async up(db) {
    const statements = COLUMNS.map(
      ([table, columns]) => `ALTER TABLE ${table} ${columns.map((c) => `ALTER COLUMN ${c} SET COMPRESSION lz4`).join(', ')};`,
    ).join('\n      ');
    // One block: a server without lz4 refuses the first statement (feature_not_supported) and keeps pglz everywhere.
    await sql
      .raw(
        `DO $$ BEGIN
      ${statements}
    EXCEPTION WHEN feature_not_supported THEN
      RAISE NOTICE 'this PostgreSQL server is built without lz4: JSON columns keep pglz compression';
    END $$`,
      )
      .execute(db);
  },
};
