/**
 * Running the in-code migrations of a backend (sqlite/migrations/, postgres/migrations/), numbered alike: the same
 * name is the same schema change on both. (Kysely's FileMigrationProvider breaks on Windows ESM and when bundled, so
 * the lists are code.) A migration that has run is never edited: change the schema with a new one.
 */
import { sql, type Kysely } from 'kysely';
import type { Migration, MigrationProvider } from 'kysely/migration';
import { Migrator } from 'kysely/migration';
import { StoreError } from './errors.ts';

/**
 * A migration that is a fixed list of SQL statements, run in order on the migration's transaction (a failing one
 * fails the migration and nothing of it commits). The statements are frozen with their migration like any other.
 */
export function statementsMigration(statements: readonly string[]): Migration {
  return {
    async up(db) {
      for (const statement of statements) await sql.raw(statement).execute(db);
    },
  };
}

class InCodeMigrationProvider implements MigrationProvider {
  readonly #migrations: Readonly<Record<string, Migration>>;

  constructor(migrations: Readonly<Record<string, Migration>>) {
    this.#migrations = migrations;
  }

  getMigrations(): Promise<Record<string, Migration>> {
    return Promise.resolve({ ...this.#migrations });
  }
}

/**
 * Brings the schema to the latest migration. Each migration runs in its own transaction, so a crash leaves the
 * database at the last migration that committed, and the next open continues from there. Kysely's
 * `migrateToLatest` never throws; its `error` is turned into a StoreError here. A database migrated by a newer
 * agent (a name this code does not know) is refused rather than used.
 *
 * @returns the names of the migrations that ran now (empty when already up to date).
 */
export async function migrateToLatest<DB>(
  kysely: Kysely<DB>,
  migrations: Readonly<Record<string, Migration>>,
  options: { schema?: string } = {},
): Promise<string[]> {
  // Numbers are reserved per branch and land in any order (0007 landed before 0006): a database that ran a later
  // number first runs the earlier one when it arrives. Each migration adds only its own tables and columns.
  const migrator = new Migrator({
    db: kysely,
    provider: new InCodeMigrationProvider(migrations),
    allowUnorderedMigrations: true,
    ...(options.schema === undefined ? {} : { migrationTableSchema: options.schema }),
  });
  const { error, results = [] } = await migrator.migrateToLatest();
  const failed = results.find((r) => r.status === 'Error');
  if (error !== undefined || failed) {
    const name = failed ? ` (${failed.migrationName})` : '';
    const reason = error instanceof Error ? error.message : String(error);
    throw new StoreError('MIGRATION_FAILED', `database migration failed${name}: ${reason}`, { cause: error });
  }
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
