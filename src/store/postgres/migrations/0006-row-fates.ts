/**
 * 0006_row_fates (PostgreSQL): every row of a pushed file accounted for, as in sqlite/migrations/0006-row-fates.ts
 * (the meaning of each column is written there). Owner: src/store/push-ledger.ts.
 *
 * key_hashes is bytea (SQLite's BLOB): three little-endian 32-bit integers per accepted row; push_rejects.sent stays
 * an integer 0/1, as on SQLite, so rows read back are the same on both backends.
 */
import type { Migration } from 'kysely/migration';
import { statementsMigration } from '../../migrate.ts';

const STATEMENTS = [
  `ALTER TABLE push_files ADD COLUMN rows_skipped integer`,
  `ALTER TABLE push_files ADD COLUMN rows_unchanged integer`,
  `ALTER TABLE push_batches ADD COLUMN rows_unchanged integer NOT NULL DEFAULT 0`,
  `ALTER TABLE push_batches ADD COLUMN key_hashes bytea`,
  `ALTER TABLE push_rejects ADD COLUMN errors text`,
  `ALTER TABLE push_rejects ADD COLUMN sent integer NOT NULL DEFAULT 0 CHECK (sent IN (0, 1))`,
];

export const migration0006RowFates: Migration = statementsMigration(STATEMENTS);
