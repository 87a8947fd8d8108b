/**
 * 0009_ha_lease (issue 15): the HA lease and nodes, as in postgres/migrations/0009-ha-lease.ts (what each column
 * means is written there). Never used on SQLite: HA needs a state every node reaches (state.backend postgres). The
 * tables exist so that both backends have the same tables (`state migrate` copies every table both have).
 */
import type { Migration } from 'kysely/migration';
import { statementsMigration } from '../../migrate.ts';

const STATEMENTS = [
  `CREATE TABLE ha_lease (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    holder TEXT NOT NULL CHECK (length(holder) > 0),
    token INTEGER NOT NULL CHECK (token > 0),
    acquired_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
  ) STRICT`,
  `CREATE TABLE ha_nodes (
    node TEXT PRIMARY KEY CHECK (length(node) > 0),
    role TEXT NOT NULL CHECK (role IN ('active', 'standby', 'stopped')),
    token INTEGER,
    started_at TEXT NOT NULL,
    seen_at TEXT NOT NULL,
    version TEXT NOT NULL
  ) STRICT`,
];

export const migration0009HaLease: Migration = statementsMigration(STATEMENTS);
