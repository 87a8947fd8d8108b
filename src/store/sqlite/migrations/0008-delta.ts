/**
 * 0008_delta (issue 13): what delta push remembers. Owner: src/store/delta-state.ts (nothing else writes these tables).
 *
 * - delta_scopes: one row per source that pushes with delta: the fingerprint of its mapping and the generation
 *   that numbers it, when it last sent a file whole, how far the mirrors have been compared with what it sent.
 * - delta_keys: per source and business key (a 64-bit hash of it), a 64-bit hash of the row as the API last
 *   accepted it (0: the platform holds something else now, found through a mirror), under which generation, its
 *   price (the price brake), the id the API gave it (missing: delete), the file that sent it, and for snapshot
 *   sources the key itself (to name a missing key). WITHOUT ROWID, clustered by (scope, key hash): a source's keys
 *   are read in hash order, which is how a file is compared with them (src/ingest/delta/compare.ts).
 * - delta_files: what delta decided for a file (counts by kind, held and released), next to its push_files row.
 */
import type { Migration } from 'kysely/migration';
import { statementsMigration } from '../../migrate.ts';

const STATEMENTS = [
  `CREATE TABLE delta_scopes (
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL UNIQUE,
    entity TEXT NOT NULL,
    fingerprint TEXT,
    generation INTEGER NOT NULL DEFAULT 0,
    full_at TEXT,
    mirror_checked_at TEXT,
    updated_at TEXT NOT NULL
  ) STRICT`,
  `CREATE TABLE delta_keys (
    scope_id INTEGER NOT NULL,
    key_hash INTEGER NOT NULL,
    content INTEGER NOT NULL,
    generation INTEGER NOT NULL,
    price TEXT,
    platform_id ANY,
    file_id INTEGER NOT NULL,
    key_text TEXT,
    PRIMARY KEY (scope_id, key_hash)
  ) STRICT, WITHOUT ROWID`,
  `CREATE TABLE delta_files (
    file_id INTEGER PRIMARY KEY REFERENCES push_files(id),
    mode TEXT NOT NULL CHECK (mode IN ('delta', 'full')),
    reason TEXT,
    known INTEGER NOT NULL,
    unchanged INTEGER NOT NULL,
    changed INTEGER NOT NULL,
    new_keys INTEGER NOT NULL,
    remapped INTEGER NOT NULL,
    platform_changed INTEGER NOT NULL,
    missing INTEGER NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0,
    held_at TEXT,
    held_path TEXT,
    released_at TEXT,
    released_for INTEGER REFERENCES push_files(id),
    brakes TEXT,
    updated_at TEXT NOT NULL
  ) STRICT`,
  // Mirror rows newer than a scope's mirror_checked_at are compared with what the scope sent.
  `CREATE INDEX mirror_products_synced ON mirror_products (synced_at)`,
  `CREATE INDEX mirror_product_store_synced ON mirror_product_store (synced_at)`,
];

export const migration0008Delta: Migration = statementsMigration(STATEMENTS);
