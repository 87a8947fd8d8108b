/**
 * 0013_reference_checks: nothing to change on SQLite, whose foreign keys cost an index probe per row. On PostgreSQL
 * the references of price_feed, approval_acks and approved_prices.intent_id are checked once per statement by
 * triggers instead of foreign keys (postgres/migrations/0013-reference-checks.ts). Numbered here too: the same name
 * is the same change on both backends (migrate.ts), and a number is never reused for something else.
 */
import type { Migration } from 'kysely/migration';

export const migration0013ReferenceChecks: Migration = {
  async up() {
    // Nothing: see above.
  },
};
