/**
 * In-code migrations, numbered, run at every read-write open. (Kysely's FileMigrationProvider breaks on Windows ESM
 * and when bundled, so the list is code.)
 *
 * Adding a migration: write `NNNN-name.ts` exporting a `Migration`, import it and add one line to MIGRATIONS.
 * A migration that has run is never edited: change the schema with a new one. Names sort in run order.
 */
import type { Kysely } from 'kysely';
import type { Migration, MigrationProvider } from 'kysely/migration';
import { Migrator } from 'kysely/migration';
import { StoreError } from '../errors.ts';
import { migration0001Base } from './0001-base.ts';
import { migration0002PullOutbox } from './0002-pull-outbox.ts';
import { migration0003Push } from './0003-push.ts';
import { migration0004AckState } from './0004-ack-state.ts';
import { migration0006RowFates } from './0006-row-fates.ts';
import { migration0007Feed } from './0007-feed.ts';
import { migration0008Delta } from './0008-delta.ts';

export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001_base': migration0001Base,
  '0002_pull_outbox': migration0002PullOutbox,
  '0003_push': migration0003Push,
  '0004_ack_state': migration0004AckState,
  '0006_row_fates': migration0006RowFates,
  '0007_feed': migration0007Feed,
  '0008_delta': migration0008Delta,
};

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
 * database at the last migration that committed, and the next open continues from there. `migrateToLatest` never
 * throws; its `error` is turned into a StoreError here. A database migrated by a newer agent (a name this code
 * does not know) is refused rather than used.
 *
 * @returns the names of the migrations that ran now (empty when already up to date).
 */
export async function migrateToLatest<DB>(
  kysely: Kysely<DB>,
  migrations: Readonly<Record<string, Migration>> = MIGRATIONS,
): Promise<string[]> {
  // Numbers are reserved per branch and land in any order (0007 landed before 0006): a database that ran a later
  // number first runs the earlier one when it arrives. Each migration adds only its own tables and columns.
  const migrator = new Migrator({ db: kysely, provider: new InCodeMigrationProvider(migrations), allowUnorderedMigrations: true });
  const { error, results = [] } = await migrator.migrateToLatest();
  const failed = results.find((r) => r.status === 'Error');
  if (error !== undefined || failed) {
    const name = failed ? ` (${failed.migrationName})` : '';
    const reason = error instanceof Error ? error.message : String(error);
    throw new StoreError('MIGRATION_FAILED', `database migration failed${name}: ${reason}`, { cause: error });
  }
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
