/**
 * 0015_line_mode_failed (issue 13): delta_scopes.line_failed_seed, the seed (ingest/delta/fast/line-hash.ts seedId) of the
 * files for which delta push's line mode last gave way to comparing by content: its remembered line hashes were made
 * under another header or agent version. Files of that seed are compared by content at once, without the line pass that
 * would fail again, until every row of the source is sent again (a full send, a mapping changed), which clears it.
 * Owner: src/store/delta-state.ts.
 */
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

export const migration0015LineModeFailed: Migration = {
  async up(db) {
    await sql.raw(`ALTER TABLE delta_scopes ADD COLUMN line_failed_seed TEXT`).execute(db);
  },
};
