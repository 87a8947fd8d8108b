/**
 * Opening the PostgreSQL state: the pool, the schema (created when the role may), the migrations (through Kysely's
 * migrator, whose lock makes two nodes starting at once run them once), or, read-only, a check that the agent
 * created the schema.
 */
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import type { PostgresConfig } from '../../config/state-schema.ts';
import { AGENT_VERSION } from '../../version.ts';
import { StoreError } from '../errors.ts';
import { migrateToLatest } from '../migrate.ts';
import {
  defaultBackupPath,
  hasPendingMigrations,
  pruneAutomaticBackups,
  tooNewMessage,
  unknownMigrations,
  WRITTEN_BY_KEY,
  type StateFacts,
} from '../upgrade-safety.ts';
import { dumpPostgres } from './dump.ts';
import { POSTGRES_MIGRATIONS } from '../migration-list.ts';
import { describeLocation } from './location.ts';
import { createPool, quoteIdent, type PoolOptions } from './pool.ts';
import { PostgresDb } from './postgres-db.ts';

export interface PostgresOptions extends Omit<PoolOptions, 'applicationName'> {
  /** Milliseconds since the epoch; the project's Clock.now. */
  now?: () => number;
  /**
   * Before this open migrates an existing schema: its automatic backup goes to `<stateDir>/backups/` (pg_dump) and is
   * named through `onBackup`; when it cannot be taken (no pg_dump on PATH), `onNoBackup` says why and the upgrade goes
   * on (docs/upgrade.md). Without it no backup is taken (tests, `state migrate`).
   */
  upgrade?: { readonly stateDir: string; readonly onBackup: (file: string) => void; readonly onNoBackup: (why: string) => void };
}

/** Opens (creating the schema and migrating it, unless read-only) the state in `config`'s schema. */
export async function openPostgres(config: PostgresConfig, options: PostgresOptions = {}): Promise<PostgresDb> {
  const readonly = options.readonly ?? false;
  const pool = createPool(config, options);
  const location = describeLocation(config);
  const db = new PostgresDb({ location, readonly, pool, schema: config.schema, now: options.now ?? Date.now });
  try {
    await connectOnce(pool, config, location);
    if (readonly) await requireInitialized(pool, config.schema, location);
    else {
      await ensureSchema(pool, config.schema, location);
      await migrateWithBackup(pool, config, location, options);
    }
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
  return db;
}

/** A first connection, so that a wrong host, password or certificate is one clear error at start. */
async function connectOnce(pool: pg.Pool, config: PostgresConfig, location: string): Promise<void> {
  try {
    const client = await pool.connect();
    client.release();
  } catch (error) {
    const reason = connectAdvice(error, config) ?? (error as Error).message;
    throw new StoreError('OPEN_FAILED', `cannot connect to PostgreSQL at ${location}: ${reason}`, { cause: error });
  }
}

/** Node's codes for a certificate chain that no trusted CA signed. */
const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
]);

/**
 * What is wrong and what to do, for a first connection refused over TLS settings the user can fix in the config
 * (docs/postgresql.md, step 2) or a password the server did not accept; null for anything else (the driver's message
 * is clear enough: a wrong host, port or database). Node's own advice (`--use-system-ca`) is not what an agent's user needs.
 */
export function connectAdvice(error: unknown, config: PostgresConfig): string | null {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : '';
  const host = new URL(config.url).hostname;
  if (typeof code === 'string' && UNTRUSTED.has(code)) {
    return config.ca_file === null
      ? "the server's certificate is not trusted (no CA this machine trusts signed it): set state.postgres.ca_file to the PEM file of the CA that did"
      : `the server's certificate is not trusted: the CA in state.postgres.ca_file (${config.ca_file}) did not sign it; point ca_file at the CA that did`;
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return `the server's certificate is not issued for ${host}: use a host name it names in state.postgres.url (or sslmode: verify-ca, which checks the CA only)`;
  }
  if (code === 'CERT_HAS_EXPIRED') return "the server's certificate has expired: the database's administrator must renew it";
  if (code === '28000' && message.includes('no encryption')) {
    return `the server accepts only TLS connections from this host (pg_hba.conf hostssl), and state.postgres.sslmode is disable: set it to verify-full (or require)`;
  }
  if (message.includes('client password must be a string')) {
    return 'the server asks for a password and none is configured: set state.postgres.password_file (or password)';
  }
  if (code === '28P01') return `${message}: check the password in state.postgres.password_file (or password)`;
  if (message.includes('does not support SSL')) {
    return `the server does not offer TLS and state.postgres.sslmode is ${config.sslmode}: turn ssl on at the server, or set sslmode: disable on a network you trust`;
  }
  return null;
}

/**
 * A schema migrated by a newer agent is refused before anything touches it (an older node of an HA pair, or a rolled
 * back package, must not run on it). An existing schema that this build would migrate is first dumped to
 * `<state dir>/backups/` when pg_dump is on PATH, and the version that migrated it is kept in agent_meta.
 */
async function migrateWithBackup(pool: pg.Pool, config: PostgresConfig, location: string, options: PostgresOptions): Promise<void> {
  const facts = await stateFacts(pool, config.schema);
  const upgrade = options.upgrade;
  if (facts !== null && unknownMigrations(facts, POSTGRES_MIGRATIONS).length > 0) {
    throw new StoreError('STATE_TOO_NEW', tooNewMessage(location, facts, POSTGRES_MIGRATIONS, upgrade?.stateDir ?? ''));
  }
  if (facts !== null && upgrade !== undefined && hasPendingMigrations(facts, POSTGRES_MIGRATIONS)) {
    const file = defaultBackupPath(upgrade.stateDir, new Date((options.now ?? Date.now)()), true, 'dump');
    try {
      await dumpPostgres(config, file);
      pruneAutomaticBackups(upgrade.stateDir);
      upgrade.onBackup(file);
    } catch (error) {
      upgrade.onNoBackup((error as Error).message);
    }
  }
  // Kysely only runs the migrations; not destroyed afterwards (that would end the shared pool).
  const kysely = new Kysely({ dialect: new PostgresDialect({ pool }) });
  const ran = await migrateToLatest(kysely, POSTGRES_MIGRATIONS, { schema: config.schema });
  if (ran.length > 0) {
    await pool.query(
      `INSERT INTO ${quoteIdent(config.schema)}.agent_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      [WRITTEN_BY_KEY, AGENT_VERSION],
    );
  }
}

/** The applied migrations and the writing version of an existing schema; null when the agent has not created it yet. */
async function stateFacts(pool: pg.Pool, schema: string): Promise<StateFacts | null> {
  const found = await pool.query<{ migrations: string | null; meta: string | null }>(
    'SELECT to_regclass($1) AS migrations, to_regclass($2) AS meta',
    [`${quoteIdent(schema)}.kysely_migration`, `${quoteIdent(schema)}.agent_meta`],
  );
  const row = found.rows[0];
  if (row?.migrations == null || row.meta == null) return null;
  const applied = (await pool.query<{ name: string }>(`SELECT name FROM ${quoteIdent(schema)}.kysely_migration ORDER BY name`)).rows.map((r) => r.name);
  const written = await pool.query<{ value: string }>(`SELECT value FROM ${quoteIdent(schema)}.agent_meta WHERE key = $1`, [WRITTEN_BY_KEY]);
  return { applied, writtenBy: written.rows[0]?.value ?? null };
}

async function schemaExists(pool: pg.Pool, schema: string): Promise<boolean> {
  return (await pool.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).rowCount === 1;
}

async function ensureSchema(pool: pg.Pool, schema: string, location: string): Promise<void> {
  if (await schemaExists(pool, schema)) return;
  try {
    await pool.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
  } catch (error) {
    // IF NOT EXISTS is no guard against a node creating the schema at the same instant: PostgreSQL then answers
    // unique_violation on pg_namespace (or duplicate_schema). Either way the schema is there, which is all we need.
    const code = (error as { code?: unknown }).code;
    if (code === '23505' || code === '42P06') return;
    if (code !== '42501') throw error; // insufficient_privilege
    const role = (await pool.query<{ r: string }>('SELECT current_user AS r')).rows[0]?.r ?? 'the agent role';
    const message = `schema ${schema} does not exist at ${location} and ${role} may not create it: run CREATE SCHEMA ${quoteIdent(schema)} AUTHORIZATION ${quoteIdent(role)} as the database owner (docs/ha.md)`;
    throw new StoreError('OPEN_FAILED', message, { cause: error });
  }
}

async function requireInitialized(pool: pg.Pool, schema: string, location: string): Promise<void> {
  if (!(await schemaExists(pool, schema))) {
    throw new StoreError('MISSING', `no state at ${location} yet: the agent has not run with this state.postgres`);
  }
  const tables = await pool.query(
    `SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name IN ('agent_meta', 'price_feed')`,
    [schema],
  );
  if (tables.rowCount !== 2) {
    throw new StoreError('NOT_INITIALIZED', `schema ${schema} at ${location} was not created by pricing-agent (run the agent once first)`);
  }
}
