/**
 * 0004_ack_state: the acknowledgement state of delivered versions moves out of approved_prices into a narrow table
 * of its own, approval_acks. Owner: src/store/acknowledgements.ts (approved-prices.ts inserts the 'pending' row of a
 * delivered version in the page's transaction).
 *
 * Why: approved_prices rows are ~2 KB (the whole record is stored in each). Marking 500 ids acknowledged rewrote
 * 500 of them, about 1 MB of WAL per batch, on the pull's hot path; an approval_acks row is ~40 bytes, so a batch's
 * marks rewrite a few pages.
 *
 * A version stored without being delivered (learned from a history read; ack_status NULL before) has no
 * approval_acks row: nothing to acknowledge. The existing state is copied as it was, then the old partial index and
 * the old columns are dropped (conflict_reason first: its CHECK names ack_status). SQLite rewrites every
 * approved_prices row to drop the columns: a one-time cost at the upgrade, in this migration's transaction.
 */
import type { Migration } from 'kysely/migration';
import { statementsMigration } from '../../migrate.ts';

const STATEMENTS = [
  `CREATE TABLE approval_acks (
    approval_id INTEGER PRIMARY KEY REFERENCES approved_prices (id),
    status TEXT NOT NULL CHECK (status IN ('pending', 'acknowledged', 'conflict')),
    conflict_reason TEXT CHECK ((status = 'conflict') = (conflict_reason IS NOT NULL)),
    acked_at TEXT
  ) STRICT`,
  // The ids still to acknowledge, without scanning the acknowledged ones.
  `CREATE INDEX approval_acks_pending ON approval_acks (approval_id) WHERE status = 'pending'`,
  `INSERT INTO approval_acks (approval_id, status, conflict_reason, acked_at)
    SELECT id, ack_status, conflict_reason, acked_at FROM approved_prices WHERE ack_status IS NOT NULL ORDER BY id`,
  `DROP INDEX approved_prices_ack_pending`,
  `ALTER TABLE approved_prices DROP COLUMN conflict_reason`,
  `ALTER TABLE approved_prices DROP COLUMN ack_status`,
  `ALTER TABLE approved_prices DROP COLUMN acked_at`,
];

export const migration0004AckState: Migration = statementsMigration(STATEMENTS);
