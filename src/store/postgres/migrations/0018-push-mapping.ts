/**
 * 0018_push_mapping (PostgreSQL): push_files.mapping, as in sqlite/migrations/0018-push-mapping.ts (what it means is
 * written there). Owner: src/store/push-ledger.ts.
 */
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

export const migration0018PushMapping: Migration = {
  async up(db) {
    await sql.raw(`ALTER TABLE push_files ADD COLUMN mapping text`).execute(db);
  },
};
