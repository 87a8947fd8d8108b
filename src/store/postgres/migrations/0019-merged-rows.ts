/**
 * 0019_merged_rows (PostgreSQL): push_files.rows_merged and the `merged` stage of push_rejects, as in
 * sqlite/migrations/0019-merged-rows.ts (what they mean is written there). Owner: src/store/push-ledger.ts.
 */
import type { Migration } from 'kysely/migration';
import { statementsMigration } from '../../migrate.ts';

const STATEMENTS = [
  `ALTER TABLE push_files ADD COLUMN rows_merged integer`,
  // The name PostgreSQL gave the column's CHECK in 0003_push.
  `ALTER TABLE push_rejects DROP CONSTRAINT push_rejects_stage_check`,
  `ALTER TABLE push_rejects ADD CONSTRAINT push_rejects_stage_check CHECK (stage IN ('local', 'api', 'superseded', 'merged'))`,
];

export const migration0019MergedRows: Migration = statementsMigration(STATEMENTS);
