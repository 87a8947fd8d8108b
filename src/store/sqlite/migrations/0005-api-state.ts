/**
 * 0005_api_state: what the agent learned about the API and how it must pace itself, shared by every process on
 * this state directory (the daemon, one-shot commands, a restarted agent), and the `parked` acknowledgement state.
 * Owner: src/store/api-state.ts (api_pacing, api_facts) and src/store/acknowledgements.ts (approval_acks).
 *
 * - api_pacing: moments before which a kind of request must not be sent. `retry_after`: the end of the last
 *   Retry-After window (the API's rate limit is per key, so per account, whichever process was told); `job:<id>`:
 *   the next poll of an import job at the document's pace, with the status it last had.
 * - api_facts: choices the document leaves open that the agent found out from the server, e.g. the acknowledge
 *   body shape the server accepts (`ack_body_shape`), kept so that the next run does not ask again.
 * - approval_acks gains `parked`: ids the platform refused with a 4xx other than 409/429, set aside with the reason
 *   (kept in conflict_reason) so that they never block later ids. SQLite cannot change a CHECK constraint, so the
 *   table (a few bytes per delivered version) is rebuilt, every row kept as it was.
 */
import type { Migration } from 'kysely/migration';
import { statementsMigration } from '../../migrate.ts';

const STATEMENTS = [
  `CREATE TABLE api_pacing (
    key TEXT PRIMARY KEY,
    until_ms INTEGER NOT NULL,
    detail TEXT,
    updated_at TEXT NOT NULL
  ) STRICT`,
  `CREATE TABLE api_facts (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    learned_at TEXT NOT NULL
  ) STRICT`,
  `CREATE TABLE approval_acks_0005 (
    approval_id INTEGER PRIMARY KEY REFERENCES approved_prices (id),
    status TEXT NOT NULL CHECK (status IN ('pending', 'acknowledged', 'conflict', 'parked')),
    conflict_reason TEXT CHECK ((status IN ('conflict', 'parked')) = (conflict_reason IS NOT NULL)),
    acked_at TEXT
  ) STRICT`,
  `INSERT INTO approval_acks_0005 (approval_id, status, conflict_reason, acked_at)
    SELECT approval_id, status, conflict_reason, acked_at FROM approval_acks ORDER BY approval_id`,
  `DROP TABLE approval_acks`,
  `ALTER TABLE approval_acks_0005 RENAME TO approval_acks`,
  `CREATE INDEX approval_acks_pending ON approval_acks (approval_id) WHERE status = 'pending'`,
];

export const migration0005ApiState: Migration = statementsMigration(STATEMENTS);
