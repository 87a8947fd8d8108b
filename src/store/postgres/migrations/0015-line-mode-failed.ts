/**
 * 0015_line_mode_failed (PostgreSQL): delta_scopes.line_failed_seed, as in sqlite/migrations/0015-line-mode-failed.ts
 * (what it means is written there). Owner: src/store/delta-state.ts.
 */
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

export const migration0015LineModeFailed: Migration = {
  async up(db) {
    await sql.raw(`ALTER TABLE delta_scopes ADD COLUMN line_failed_seed text`).execute(db);
  },
};
