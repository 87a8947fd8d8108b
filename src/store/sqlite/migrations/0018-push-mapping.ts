/**
 * 0018_push_mapping (issue 28): push_files.mapping, the fingerprint of the source's mapping a file was read with
 * (ingest/delta/fingerprint.ts). The same content is a duplicate only under the same mapping: after a mapping fix it
 * is sent again. Null for files claimed before this migration: they count as under any mapping (as before).
 * Owner: src/store/push-ledger.ts.
 */
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

export const migration0018PushMapping: Migration = {
  async up(db) {
    await sql.raw(`ALTER TABLE push_files ADD COLUMN mapping TEXT`).execute(db);
  },
};
