/**
 * The pg pool of the agent, from the `state.postgres` section: TLS as libpq's sslmode names it, the password never in
 * the URL, timeouts that fail instead of waiting forever, and the settings every connection gets before its first
 * statement (the agent's schema on the search_path, the statement and idle-in-transaction timeouts).
 *
 * [library notes] Without `connectionTimeoutMillis` a full pool waits forever; without an 'error' listener an idle
 * client killed by the server (a restart, a failover) crashes the process. Both are set here.
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import pg from 'pg';
import type { PostgresConfig } from '../../config/state-schema.ts';

/** bigint (ids, seqs, counts) as a number: every one the agent stores is far below 2^53. */
const INT8 = 20;
const NUMERIC = 1700;
/** date, timestamp, timestamptz: the text PostgreSQL sends (pg would make a local-time Date, cut to ms). */
const DATE_TIME = new Set([1082, 1114, 1184]);

/** The pool's own parsers (pg's global ones stay as they are for any other user of pg in the process). */
const types: pg.CustomTypesConfig = {
  getTypeParser: (oid: number, format?: 'text' | 'binary'): ((text: string) => unknown) => {
    if (oid === INT8) return parseInt8;
    if (oid === NUMERIC || DATE_TIME.has(oid)) return (text: string) => text;
    return pg.types.getTypeParser(oid, format) as (text: string) => unknown;
  },
};

function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`bigint ${text} is beyond what the agent reads as a number`);
  return value;
}

export interface PoolOptions {
  readonly readonly?: boolean;
  /**
   * Every connection's idle_in_transaction_session_timeout, in ms. Under HA it must not exceed the lease: a frozen
   * active holding a transaction open would otherwise block the takeover (library notes).
   */
  readonly idleInTransactionTimeoutMs?: number;
  /** An idle connection failed (the server restarted or went away); the pool replaces it. */
  readonly onIdleError?: (error: Error) => void;
  /** application_name, as pg_stat_activity shows it. */
  readonly applicationName?: string;
}

/** `"name"`: an identifier quoted for SQL. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export function tlsOptions(config: PostgresConfig): false | ConnectionOptions {
  switch (config.sslmode) {
    case 'disable':
      return false;
    case 'require':
      return { rejectUnauthorized: false };
    case 'verify-ca':
    case 'verify-full': {
      const ca = config.ca_file === null ? undefined : readFileSync(config.ca_file, 'utf8');
      const tls: ConnectionOptions = { rejectUnauthorized: true, ...(ca === undefined ? {} : { ca }) };
      // verify-ca: the chain is checked, the host name is not (as libpq does).
      if (config.sslmode === 'verify-ca') tls.checkServerIdentity = () => undefined;
      return tls;
    }
  }
}

/**
 * Where to connect, from `state.postgres.url` (checked by the config: no password, no parameters), and the password.
 *
 * Not pg's `connectionString`: pg merges the parsed URL over the other options, and a URL without a password parses
 * to an empty one, so `password` was replaced by nothing and the server's password check failed ("client password
 * must be a string"). Every server that asks for a password (scram-sha-256, md5) refused the agent.
 */
export function connectionFields(config: PostgresConfig): pg.ClientConfig {
  const url = new URL(config.url);
  return {
    // [::1] in a URL is ::1; %2Fvar%2Frun%2Fpostgresql is a Unix socket's folder (peer authentication), as libpq reads it.
    host: decodeURIComponent(url.hostname).replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? 5432 : Number(url.port),
    database: decodeURIComponent(url.pathname.slice(1)),
    ...(url.username === '' ? {} : { user: decodeURIComponent(url.username) }),
    ...(config.password === null ? {} : { password: config.password }),
  };
}

export function createPool(config: PostgresConfig, options: PoolOptions = {}): pg.Pool {
  // Run on each new connection before it is handed out (pg-pool awaits onConnect; a failure fails that connect).
  // Not startup parameters: PgBouncer refuses those.
  const settings = [
    `SET search_path TO ${quoteIdent(config.schema)}`,
    `SET statement_timeout = ${Math.trunc(config.statement_timeout_ms)}`,
    ...(options.idleInTransactionTimeoutMs === undefined
      ? []
      : [`SET idle_in_transaction_session_timeout = ${Math.trunc(options.idleInTransactionTimeoutMs)}`]),
    ...(options.readonly === true ? ['SET default_transaction_read_only = on'] : []),
  ].join('; ');
  const pool = new pg.Pool({
    ...connectionFields(config),
    ssl: tlsOptions(config),
    max: config.pool_size,
    connectionTimeoutMillis: config.connect_timeout_ms,
    idleTimeoutMillis: 30_000, // 30 s
    keepAlive: true,
    application_name: options.applicationName ?? 'pricing-agent',
    types,
    // Statements a transaction issues without awaiting each other (Promise.all) go to the server together and run in
    // the order issued, each with its own answer: a page transaction is then a few round trips instead of ten. A
    // statement issued after a failed one fails too (the transaction is aborted), and postgres-db.ts never commits
    // a transaction in which a statement failed. Statements awaited one by one run exactly as without it.
    pipeline: true,
    // pg-pool awaits the promise onConnect returns (_promiseTry(onConnect).then(...)); @types/pg says void.
    // eslint-disable-next-line @typescript-eslint/no-misused-promises
    onConnect: async (client: pg.ClientBase) => {
      await client.query(settings);
    },
  });
  pool.on('error', (error) => options.onIdleError?.(error));
  return pool;
}
