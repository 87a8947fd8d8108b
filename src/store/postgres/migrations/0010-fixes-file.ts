/**
 * 0010_fixes_file (PostgreSQL): push_files.fixes_file_id, as in sqlite/migrations/0010-fixes-file.ts (what it means is
 * written there). Owner: src/store/push-ledger.ts.
 */
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

export const migration0010FixesFile: Migration = {
  async up(db) {
    await sql.raw(`ALTER TABLE push_files ADD COLUMN fixes_file_id bigint REFERENCES push_files (id)`).execute(db);
  },
};
