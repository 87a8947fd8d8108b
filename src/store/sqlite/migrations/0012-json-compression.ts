/**
 * 0012_json_compression: nothing to change on SQLite, which does not compress values. On PostgreSQL the JSON text
 * columns that can outgrow its 2 kB row threshold are compressed with lz4 instead of pglz
 * (postgres/migrations/0012-json-compression.ts). Numbered here too: the same name is the same change on both
 * backends (migrate.ts), and a number is never reused for something else.
 */
import type { Migration } from 'kysely/migration';

export const migration0012JsonCompression: Migration = {
  async up() {
    // Nothing: see above.
  },
};
