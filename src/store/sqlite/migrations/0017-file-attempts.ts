/**
 * 0017_file_attempts (issue 27, point 5): a file that was in progress when the agent died twice in a row, without
 * committing anything in between, is set aside in failed/ (CRASHED_AGENT) instead of being resumed a third time.
 * Owner: src/store/push-ledger.ts (openAttempt, closeAttempt).
 *
 * - push_files.attempt_progress: NULL while no attempt on the file is running; else the file's progress (committed
 *   batches, plus one once an import job is known) when the running attempt began. Still set at start-up means the
 *   agent died during that attempt.
 * - push_files.crashes: deaths in a row without progress in between; 0 after an attempt that ended.
 */
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

export const migration0017FileAttempts: Migration = {
  async up(db) {
    await sql.raw(`ALTER TABLE push_files ADD COLUMN attempt_progress INTEGER`).execute(db);
    await sql.raw(`ALTER TABLE push_files ADD COLUMN crashes INTEGER NOT NULL DEFAULT 0`).execute(db);
  },
};
