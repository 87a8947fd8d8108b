/**
 * 0014_line_hash (PostgreSQL): delta_keys.line_hash, as in sqlite/migrations/0014-line-hash.ts (what it means is
 * written there). Owner: src/store/delta-state.ts.
 */
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

export const migration0014LineHash: Migration = {
  async up(db) {
    await sql.raw(`ALTER TABLE delta_keys ADD COLUMN line_hash bigint`).execute(db);
  },
};
