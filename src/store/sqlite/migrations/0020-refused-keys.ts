/**
 * 0020_refused_keys (issue 28): why each row of a delta file was sent. Owner: src/store/delta-state.ts.
 *
 * - delta_refused: the keys of a delta source whose last row the API refused (not remembered in delta_keys, which
 *   holds only what the API accepted): their next row is sent again and counted as "refused before". A key leaves it
 *   when the API accepts a row of it;
 * - delta_files.refused_before and delta_files.forced: the file's rows sent because the API refused their key's row
 *   before, and those sent though unchanged (a full send). NULL for files compared before this migration.
 */
import type { Migration } from 'kysely/migration';
import { statementsMigration } from '../../migrate.ts';

const STATEMENTS = [
  `CREATE TABLE delta_refused (
    scope_id INTEGER NOT NULL,
    key_hash INTEGER NOT NULL,
    PRIMARY KEY (scope_id, key_hash)
  ) STRICT, WITHOUT ROWID`,
  `ALTER TABLE delta_files ADD COLUMN refused_before INTEGER`,
  `ALTER TABLE delta_files ADD COLUMN forced INTEGER`,
];

export const migration0020RefusedKeys: Migration = statementsMigration(STATEMENTS);
