/**
 * 0019_merged_rows (issue 28): rows added up into another row of their file (`duplicate_keys: sum`, the default for
 * transactions: two till lines of one sale) are a fate of their own, `merged`, beside superseded.
 * Owner: src/store/push-ledger.ts.
 *
 * - push_files.rows_merged: the file's merged rows when it finished (NULL for files finished before this migration,
 *   and while a file is in progress, like the other counts);
 * - push_rejects.stage may be 'merged' (the merged row, with the line it was added into). SQLite cannot change a
 *   CHECK constraint in place: the table is built again from its own definition under another name and renamed,
 *   inside the migration's transaction, so a crash leaves the old table as it was.
 */
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

const OLD_CHECK = "CHECK (stage IN ('local', 'api', 'superseded'))";
const NEW_CHECK = "CHECK (stage IN ('local', 'api', 'superseded', 'merged'))";

export const migration0019MergedRows: Migration = {
  async up(db) {
    await sql.raw(`ALTER TABLE push_files ADD COLUMN rows_merged INTEGER`).execute(db);
    // The table's own definition with only its CHECK changed: migrations land out of number order (a database may
    // take 0006's columns after this one), so the copy keeps whatever columns the table has now, in their order.
    const found = await sql<{ sql: string }>`SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'push_rejects'`.execute(db);
    const create = found.rows[0]?.sql ?? '';
    if (!create.includes(OLD_CHECK)) throw new Error(`push_rejects is not as 0003_push made it: ${create}`);
    const renamed = create.replace(/^CREATE TABLE\s+"?push_rejects"?/, 'CREATE TABLE push_rejects_0019').replace(OLD_CHECK, NEW_CHECK);
    await sql.raw(renamed).execute(db);
    await sql.raw(`INSERT INTO push_rejects_0019 SELECT * FROM push_rejects`).execute(db);
    await sql.raw(`DROP TABLE push_rejects`).execute(db);
    await sql.raw(`ALTER TABLE push_rejects_0019 RENAME TO push_rejects`).execute(db);
  },
};
