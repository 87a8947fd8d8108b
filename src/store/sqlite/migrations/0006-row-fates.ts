/**
 * 0006_row_fates (issue 12): every row of a pushed file accounted for. Owner: src/store/push-ledger.ts.
 *
 * - push_files.rows_skipped, rows_unchanged: rows `skip_rows` skipped, rows not sent because the platform already
 *   holds them (delta push, issue 13: 0 until then). read = sent + unchanged + rejected locally + superseded +
 *   skipped.
 * - push_batches.rows_unchanged: the same per batch; push_batches.key_hashes: a 64-bit hash of the business key and
 *   the line of every row the batch got accepted (three 32-bit integers per row, little-endian), so that rows of
 *   different batches with the same key are found at the end of the file in bounded memory, across restarts.
 * - push_rejects.errors: every problem of a locally rejected row (JSON [{field, code, message}]), not only the first;
 *   push_rejects.sent: 1 for a row superseded after it was sent and accepted (a later row of the file with the same
 *   key was accepted too): it counts as superseded, not as sent or accepted.
 */
import type { Migration } from 'kysely/migration';
import { statementsMigration } from '../../migrate.ts';

const STATEMENTS = [
  `ALTER TABLE push_files ADD COLUMN rows_skipped INTEGER`,
  `ALTER TABLE push_files ADD COLUMN rows_unchanged INTEGER`,
  `ALTER TABLE push_batches ADD COLUMN rows_unchanged INTEGER NOT NULL DEFAULT 0`,
  `ALTER TABLE push_batches ADD COLUMN key_hashes BLOB`,
  `ALTER TABLE push_rejects ADD COLUMN errors TEXT`,
  `ALTER TABLE push_rejects ADD COLUMN sent INTEGER NOT NULL DEFAULT 0 CHECK (sent IN (0, 1))`,
];

export const migration0006RowFates: Migration = statementsMigration(STATEMENTS);
