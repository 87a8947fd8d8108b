/**
 * 0016_reader_rows (PostgreSQL; issue 27 point 8): what a POS reader's role may change is its own consumers' offsets,
 * and nothing of anybody else's, whatever the grants say.
 *
 * The grants of docs/postgresql.md let a reader role INSERT and UPDATE consumer_offsets: any row, so one UPDATE
 * rewound or skipped every consumer's offset, the feed API's tills included. Row-level security now ties a row to a
 * role: a role writes the offset of consumer `c` only if it is role `c` or a member of it (`GRANT "c" TO middleware`
 * for one login that records several). Every role may still read every offset (lag and monitoring queries).
 * feed_applied (what stores confirmed they applied) is written by the agent only: no role but its owner gets a row
 * policy to write with. TRUNCATE, which row-level security does not cover, is refused to anyone but the owner.
 *
 * The agent's role owns the tables, so none of this applies to it (row-level security spares the owner unless
 * FORCEd): the feed API, `outbox ack` and `state migrate` write as before. SQLite has no roles: its 0016 changes
 * nothing (docs/outbox.md says what a process that can write the file can do).
 */
import type { Migration } from 'kysely/migration';
import { statementsMigration } from '../../migrate.ts';

/** The querying role is the consumer's role, or a member of it. */
const OWN_CONSUMER = `EXISTS (SELECT 1 FROM pg_catalog.pg_roles r
  WHERE r.rolname = consumer AND pg_catalog.pg_has_role(current_user, r.oid, 'MEMBER'))`;

const STATEMENTS = [
  `ALTER TABLE consumer_offsets ENABLE ROW LEVEL SECURITY`,
  `CREATE POLICY consumer_offsets_read ON consumer_offsets FOR SELECT USING (true)`,
  `CREATE POLICY consumer_offsets_insert_own ON consumer_offsets FOR INSERT WITH CHECK (${OWN_CONSUMER})`,
  `CREATE POLICY consumer_offsets_update_own ON consumer_offsets FOR UPDATE USING (${OWN_CONSUMER}) WITH CHECK (${OWN_CONSUMER})`,
  `ALTER TABLE feed_applied ENABLE ROW LEVEL SECURITY`,
  `CREATE POLICY feed_applied_read ON feed_applied FOR SELECT USING (true)`,
  `CREATE FUNCTION owner_only_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NOT pg_catalog.pg_has_role(current_user, (SELECT relowner FROM pg_catalog.pg_class WHERE oid = TG_RELID), 'MEMBER') THEN
        RAISE EXCEPTION 'only the agent''s role may truncate %', TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
      END IF;
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER consumer_offsets_owner_truncate BEFORE TRUNCATE ON consumer_offsets
    FOR EACH STATEMENT EXECUTE FUNCTION owner_only_truncate()`,
  `CREATE TRIGGER feed_applied_owner_truncate BEFORE TRUNCATE ON feed_applied
    FOR EACH STATEMENT EXECUTE FUNCTION owner_only_truncate()`,
];

export const migration0016ReaderRows: Migration = statementsMigration(STATEMENTS);
