/**
 * 0009_ha_lease (issue 15): the lease that makes one node of an HA pair the active one, and the nodes that share
 * the state. Owner: src/store/ha-lease.ts. The SQLite twin (sqlite/migrations/0009-ha-lease.ts) has the same tables,
 * never used: HA needs a state that every node reaches, which SQLite is not.
 *
 * - ha_lease: at most one row. `holder` is active until `expires_at`, both on the database's clock (now()), so no
 *   node's own clock decides. Each takeover adds one to `token`, the fencing token: every write transaction of the
 *   active first checks, FOR SHARE, that the row still names it with its token and has not expired, so a node whose
 *   lease ended commits nothing (and a takeover waits for the write transactions in flight of the old holder).
 * - ha_nodes: per node name, its role as it last said and when (the database's clock): what `status` shows.
 */
import type { Migration } from 'kysely/migration';
import { statementsMigration } from '../../migrate.ts';

const STATEMENTS = [
  `CREATE TABLE ha_lease (
    id integer PRIMARY KEY CHECK (id = 1),
    holder text NOT NULL CHECK (length(holder) > 0),
    token bigint NOT NULL CHECK (token > 0),
    acquired_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
  )`,
  `CREATE TABLE ha_nodes (
    node text PRIMARY KEY CHECK (length(node) > 0),
    role text NOT NULL CHECK (role IN ('active', 'standby', 'stopped')),
    token bigint,
    started_at timestamptz NOT NULL,
    seen_at timestamptz NOT NULL,
    version text NOT NULL
  )`,
];

export const migration0009HaLease: Migration = statementsMigration(STATEMENTS);
