/**
 * 0005_api_state (PostgreSQL): api_pacing, api_facts and the `parked` acknowledgement state, as in
 * sqlite/migrations/0005-api-state.ts (what each table and state means is written there). Owners:
 * src/store/api-state.ts, src/store/acknowledgements.ts.
 *
 * PostgreSQL changes a CHECK constraint in place: approval_acks keeps its rows, only its two checks are replaced.
 */
import type { Migration } from 'kysely/migration';
import { statementsMigration } from '../../migrate.ts';

const STATEMENTS = [
  `CREATE TABLE api_pacing (
    key text PRIMARY KEY,
    until_ms bigint NOT NULL,
    detail text,
    updated_at text NOT NULL
  )`,
  `CREATE TABLE api_facts (
    key text PRIMARY KEY,
    value text NOT NULL,
    learned_at text NOT NULL
  )`,
  // The two checks of 0004 (named by PostgreSQL), whatever their names.
  `DO $$ DECLARE c record; BEGIN
    FOR c IN SELECT conname FROM pg_constraint WHERE conrelid = 'approval_acks'::regclass AND contype = 'c' LOOP
      EXECUTE format('ALTER TABLE approval_acks DROP CONSTRAINT %I', c.conname);
    END LOOP;
  END $$`,
  `ALTER TABLE approval_acks
    ADD CONSTRAINT approval_acks_status_check CHECK (status IN ('pending', 'acknowledged', 'conflict', 'parked')),
    ADD CONSTRAINT approval_acks_conflict_reason_check CHECK ((status IN ('conflict', 'parked')) = (conflict_reason IS NOT NULL))`,
];

export const migration0005ApiState: Migration = statementsMigration(STATEMENTS);
