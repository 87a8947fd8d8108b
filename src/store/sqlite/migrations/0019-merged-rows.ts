/**
 * 0019_merged_rows (issue 28): rows added up into another row of their file (`duplicate_keys: sum`, the default for
 * transactions: two till lines of one sale) are a fate of their own, `merged`, beside superseded.
 * Owner: src/store/push-ledger.ts.
 *
 * - push_files.rows_merged: the file's merged rows when it finished (NULL for files finished before this migration,
 *   and while a file is in progress, like the other counts);
 * - push_rejects.stage may be 'merged' (the merged row, with the line it was added into). SQLite cannot change a
 *   CHECK constraint in place: the table is built again under its own name and renamed, inside the migration's
 *   transaction, so a crash leaves the old table as it was.
 */
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

const STATEMENTS = [
  `ALTER TABLE push_files ADD COLUMN rows_merged INTEGER`,
  `CREATE TABLE push_rejects_0019 (
    file_id INTEGER NOT NULL REFERENCES push_files(id),
    line INTEGER NOT NULL,
    stage TEXT NOT NULL CHECK (stage IN ('local', 'api', 'superseded', 'merged')),
    field TEXT,
    code TEXT NOT NULL,
    message TEXT NOT NULL,
    raw TEXT NOT NULL,
    errors TEXT,
    sent INTEGER NOT NULL DEFAULT 0 CHECK (sent IN (0, 1)),
    PRIMARY KEY (file_id, line)
  ) STRICT, WITHOUT ROWID`,
  `INSERT INTO push_rejects_0019 (file_id, line, stage, field, code, message, raw, errors, sent)
     SELECT file_id, line, stage, field, code, message, raw, errors, sent FROM push_rejects`,
  `DROP TABLE push_rejects`,
  `ALTER TABLE push_rejects_0019 RENAME TO push_rejects`,
];

export const migration0019MergedRows: Migration = {
  async up(db) {
    for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
  },
};
