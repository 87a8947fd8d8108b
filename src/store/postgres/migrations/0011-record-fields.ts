/**
 * 0011_record_fields (PostgreSQL): approved_prices.trace and approval_details become plain columns, filled by the
 * agent when it stores a version (approved-prices.ts, recordFieldText) instead of STORED generated columns. Each
 * generated column parsed the whole `record` JSON again on every insert: a third of the time of a deliveries page's
 * insert (docs/performance.md, "The pull on PostgreSQL"). What a reader sees does not change: the values are the JSON
 * text of the record's field, NULL when it is absent or null, as before; DROP EXPRESSION keeps every stored value.
 * SQLite keeps its VIRTUAL columns (computed when read, nothing to pay on insert): its 0011 changes nothing.
 */
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

export const migration0011RecordFields: Migration = {
  async up(db) {
    await sql
      .raw(`ALTER TABLE approved_prices ALTER COLUMN trace DROP EXPRESSION, ALTER COLUMN approval_details DROP EXPRESSION`)
      .execute(db);
  },
};
