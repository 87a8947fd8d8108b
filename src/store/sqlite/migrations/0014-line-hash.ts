/**
 * 0014_line_hash (issue 13): delta_keys.line_hash, a 48-bit hash of the file line a remembered row was accepted from
 * (ingest/delta/fast/line-hash.ts: its cells as read, under the file's header). Owner: src/store/delta-state.ts.
 *
 * A line whose hash equals the one remembered for its key, under the same mapping generation, maps to the same row:
 * delta push finds it unchanged without converting its cells. Null for rows remembered before this migration, or
 * from a line without one; such a key is compared as before. A signed 48-bit integer takes 6 bytes in a SQLite record
 * (7 with its type byte): the state stays under 64 bytes per key.
 */
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

export const migration0014LineHash: Migration = {
  async up(db) {
    await sql.raw(`ALTER TABLE delta_keys ADD COLUMN line_hash INTEGER`).execute(db);
  },
};
