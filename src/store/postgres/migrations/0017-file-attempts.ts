/**
 * 0017_file_attempts (PostgreSQL): push_files.attempt_progress and push_files.crashes, as in
 * sqlite/migrations/0017-file-attempts.ts (what they mean is written there). Owner: src/store/push-ledger.ts.
 */
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

export const migration0017FileAttempts: Migration = {
  async up(db) {
    await sql.raw(`ALTER TABLE push_files ADD COLUMN attempt_progress bigint`).execute(db);
    await sql.raw(`ALTER TABLE push_files ADD COLUMN crashes integer NOT NULL DEFAULT 0`).execute(db);
  },
};
