/**
 * 0004_ack_state (PostgreSQL): approval_acks, the acknowledgement state of each delivered version, one narrow row
 * per approval_id, as in sqlite/migrations/0004-ack-state.ts (which also moves the old columns; there were none
 * here). Owner: src/store/acknowledgements.ts.
 */
import type { Migration } from 'kysely/migration';
import { statementsMigration } from '../../migrate.ts';

const STATEMENTS = [
  `CREATE TABLE approval_acks (
    approval_id bigint PRIMARY KEY REFERENCES approved_prices (id),
    status text NOT NULL CHECK (status IN ('pending', 'acknowledged', 'conflict')),
    conflict_reason text CHECK ((status = 'conflict') = (conflict_reason IS NOT NULL)),
    acked_at text
  )`,
  // The ids still to acknowledge, without scanning the acknowledged ones.
  `CREATE INDEX approval_acks_pending ON approval_acks (approval_id) WHERE status = 'pending'`,
];

export const migration0004AckState: Migration = statementsMigration(STATEMENTS);
