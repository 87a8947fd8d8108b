/**
 * 0020_refused_keys (PostgreSQL): delta_refused and delta_files.refused_before and forced, as in
 * sqlite/migrations/0020-refused-keys.ts (what they mean is written there). Owner: src/store/delta-state.ts.
 */
import type { Migration } from 'kysely/migration';
import { statementsMigration } from '../../migrate.ts';

const STATEMENTS = [
  `CREATE TABLE delta_refused (
    scope_id bigint NOT NULL,
    key_hash bigint NOT NULL,
    PRIMARY KEY (scope_id, key_hash)
  )`,
  `ALTER TABLE delta_files ADD COLUMN refused_before integer`,
  `ALTER TABLE delta_files ADD COLUMN forced integer`,
];

export const migration0020RefusedKeys: Migration = statementsMigration(STATEMENTS);
