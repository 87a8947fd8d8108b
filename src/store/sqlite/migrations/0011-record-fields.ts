/**
 * 0011_record_fields: nothing to change on SQLite. On PostgreSQL, approved_prices.trace and approval_details stop
 * being STORED generated columns and are filled by the agent (postgres/migrations/0011-record-fields.ts: parsing the
 * record again on every insert cost a third of a page's insert). SQLite's are VIRTUAL: computed from `record` when
 * read, nothing paid on insert, so they stay. Numbered here too: the same name is the same change on both backends
 * (migrate.ts), and a number is never reused for something else.
 */
import type { Migration } from 'kysely/migration';

export const migration0011RecordFields: Migration = {
  async up() {
    // Nothing: see above.
  },
};
