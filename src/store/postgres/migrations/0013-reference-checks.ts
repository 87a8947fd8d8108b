/**
 * 0013_reference_checks (PostgreSQL): the three references of a deliveries page are checked once per statement
 * instead of once per row. price_feed.approval_id and approval_acks.approval_id name a version in approved_prices,
 * and approved_prices.intent_id names the delivery intent that brought it; as foreign keys PostgreSQL ran a query
 * and locked the referenced row for each of the page's 1,500 rows: 30 % of the server's CPU while it stores a page
 * (docs/performance.md, "The pull on PostgreSQL"). SQLite keeps its foreign keys (an index probe each, for little).
 *
 * The guarantee is the same for every writer, the agent or anybody with write access to the schema:
 * - a statement that inserts rows naming a version (or an intent) that does not exist fails, with the foreign key's
 *   error code (23503), and so does an UPDATE that changes such a column;
 * - a version or an intent that is referenced cannot be deleted or have its id changed, and those two tables cannot
 *   be truncated. The agent itself never deletes from them.
 * One difference from a foreign key, written down: a foreign key locks the referenced row, so a DELETE racing an
 * INSERT that names the row waits; these checks do not lock, and such a race could leave a feed row without its
 * version. It needs somebody deleting versions, which nothing does (the feed, which names every version, is
 * append-only), so nothing is locked for it.
 */
import type { Migration } from 'kysely/migration';
import { statementsMigration } from '../../migrate.ts';

/** [table, column, referenced table]. */
const REFERENCES = [
  ['price_feed', 'approval_id', 'approved_prices'],
  ['approval_acks', 'approval_id', 'approved_prices'],
  ['approved_prices', 'intent_id', 'delivery_intents'],
] as const;

/** Raised as a foreign key violation, so that callers see the same error code as before. */
const raise = (message: string): string => `RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation', MESSAGE = ${message}`;

function statements(): string[] {
  const out: string[] = [];
  for (const [table, column, referenced] of REFERENCES) {
    const name = `${table}_${column}`;
    out.push(
      `ALTER TABLE ${table} DROP CONSTRAINT ${table}_${column}_fkey`,
      // Inserted rows: one anti-join over the statement's rows (a transition table).
      `CREATE FUNCTION ${name}_exists() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
        BEGIN
          IF EXISTS (SELECT 1 FROM new_rows n WHERE n.${column} IS NOT NULL
                       AND NOT EXISTS (SELECT 1 FROM ${referenced} r WHERE r.id = n.${column})) THEN
            ${raise(`'${table}.${column} names a row that is not in ${referenced}'`)};
          END IF;
          RETURN NULL;
        END $$`,
      `CREATE TRIGGER ${name}_exists AFTER INSERT ON ${table}
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${name}_exists()`,
      // Changed references: rare (the agent never changes one), so checked row by row, and only when the statement
      // sets the column.
      `CREATE FUNCTION ${name}_changed() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
        BEGIN
          IF NEW.${column} IS NOT NULL AND NEW.${column} IS DISTINCT FROM OLD.${column}
             AND NOT EXISTS (SELECT 1 FROM ${referenced} r WHERE r.id = NEW.${column}) THEN
            ${raise(`'${table}.${column} names a row that is not in ${referenced}'`)};
          END IF;
          RETURN NEW;
        END $$`,
      `CREATE TRIGGER ${name}_changed BEFORE UPDATE OF ${column} ON ${table}
        FOR EACH ROW EXECUTE FUNCTION ${name}_changed()`,
    );
  }
  // The referenced side: a referenced row is neither deleted nor renumbered; the tables are never truncated.
  const referencedBy = new Map<string, Array<readonly [string, string]>>();
  for (const [table, column, referenced] of REFERENCES) {
    referencedBy.set(referenced, [...(referencedBy.get(referenced) ?? []), [table, column] as const]);
  }
  for (const [referenced, by] of referencedBy) {
    const uses = by.map(([table, column]) => `EXISTS (SELECT 1 FROM ${table} WHERE ${column} = OLD.id)`).join(' OR ');
    const names = by.map(([table]) => table).join(' and ');
    out.push(
      `CREATE FUNCTION ${referenced}_referenced() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
        BEGIN
          IF TG_OP = 'TRUNCATE' THEN
            ${raise(`'${referenced} is referenced by ${names}: it cannot be truncated'`)};
          END IF;
          IF (TG_OP = 'DELETE' OR NEW.id IS DISTINCT FROM OLD.id) AND (${uses}) THEN
            ${raise(`format('%s row %s is referenced by ${names}', TG_TABLE_NAME, OLD.id)`)};
          END IF;
          RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
        END $$`,
      `CREATE TRIGGER ${referenced}_referenced BEFORE DELETE OR UPDATE OF id ON ${referenced}
        FOR EACH ROW EXECUTE FUNCTION ${referenced}_referenced()`,
      `CREATE TRIGGER ${referenced}_not_truncated BEFORE TRUNCATE ON ${referenced}
        FOR EACH STATEMENT EXECUTE FUNCTION ${referenced}_referenced()`,
    );
  }
  return out;
}

export const migration0013ReferenceChecks: Migration = statementsMigration(statements());
