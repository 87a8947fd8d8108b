/**
 * 0016_reader_rows: on PostgreSQL, row-level security keeps a reader role to its own consumers' offsets
 * (postgres/migrations/0016-reader-rows.ts). SQLite has no roles: whoever can write the file can write any row, so
 * this changes nothing here; it exists so that both backends run the same list of migrations.
 */
import type { Migration } from 'kysely/migration';

export const migration0016ReaderRows: Migration = {
  async up() {
    // Nothing to change on SQLite (see above).
  },
};
