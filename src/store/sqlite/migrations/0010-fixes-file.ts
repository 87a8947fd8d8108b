/**
 * 0010_fixes_file (issue 16): a rejects CSV that a person corrected and dropped back into the inbox names the file
 * whose rejects it fixes. Owner: src/store/push-ledger.ts.
 *
 * - push_files.fixes_file_id: the ledger id of that file (the one whose `<name>.rejects.csv` this is), set once when
 *   the file starts (ingest/file/rejects-fix.ts decides it from the name); null for every other file. A fix of a fix names
 *   the fix, so the chain leads back to the first file.
 */
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

export const migration0010FixesFile: Migration = {
  async up(db) {
    await sql.raw(`ALTER TABLE push_files ADD COLUMN fixes_file_id INTEGER REFERENCES push_files (id)`).execute(db);
  },
};
