/**
 * The `state:` section: where the agent keeps its state. `dir` always holds this node's own files (per-store export
 * files, temporary files, the SQLite database when `backend` is sqlite); with `backend: postgres`, everything the
 * agent stores lives in the PostgreSQL schema of `postgres:` (shared by every node of an HA pair).
 *
 * The PostgreSQL password comes from `password_file` (read at load time, like api.key_file) or `password` (usually
 * `${PG_PASSWORD}`), never from the URL: the URL is shown in messages and status, the password never is (it is
 * registered with the logger's secret filter as soon as it is read).
 */
import { isIP } from 'node:net';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { registerSecret } from '../log.ts';
import { readCaFile } from './ca.ts';
import { pathSchema } from './section-context.ts';
import type { SectionContext } from './section-context.ts';

export const STATE_BACKENDS = ['sqlite', 'postgres'] as const;
export type StateBackend = (typeof STATE_BACKENDS)[number];

/** libpq's names; `prefer` and `allow` (encryption only if the server offers it) are not offered. */
export const SSL_MODES = ['disable', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** The resolved `state.postgres` section. */
export interface PostgresConfig {
  /** postgres://user@host:port/database, without a password. */
  readonly url: string;
  /** From password_file or password; null: none (trust, peer, or PGPASSWORD/~/.pgpass as libpq would). */
  readonly password: string | null;
  readonly password_file: string | null;
  /** The schema of the agent's tables; created by the migrations when the role may, else it must exist. */
  readonly schema: string;
  readonly sslmode: SslMode;
  /** CA certificates (PEM) for verify-ca / verify-full with a private CA. */
  readonly ca_file: string | null;
  /** Connections of this agent to the database, at most. */
  readonly pool_size: number;
  /** Waiting for a connection (a new one or a free one of the pool) fails after this. */
  readonly connect_timeout_ms: number;
  /** The server cancels a statement that runs longer. */
  readonly statement_timeout_ms: number;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

/** What is wrong with a state.postgres.url, or undefined. */
export function checkPostgresUrl(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not a URL (postgres://user@host:5432/database)';
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') return 'must start with postgres://';
  if (url.password !== '') return 'must not contain the password: put it in state.postgres.password_file or password';
  if (url.hostname === '') return 'needs a host (postgres://user@host:5432/database)';
  if (url.pathname.length <= 1) return 'needs a database name (postgres://user@host:5432/database)';
  if (url.search !== '') return 'must not have ?parameters: use state.postgres.sslmode, ca_file and the other keys';
  return undefined;
}

/**
 * The default sslmode: none on this machine (loopback, or a Unix socket's folder such as %2Fvar%2Frun%2Fpostgresql,
 * over which PostgreSQL offers no TLS), certificate and host name checked anywhere else.
 */
export function defaultSslMode(url: string): SslMode {
  const host = decodeURIComponent(new URL(url).hostname);
  const local = LOOPBACK_HOSTS.has(host) || (isIP(host) === 4 && host.startsWith('127.')) || host.startsWith('/');
  return local ? 'disable' : 'verify-full';
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

function postgresSchema(ctx: SectionContext) {
  const url = z.string().transform((value, zctx) => {
    const problem = checkPostgresUrl(value.trim());
    if (problem === undefined) return value.trim();
    zctx.addIssue({ code: 'custom', message: `state.postgres.url ${problem}` });
    return z.NEVER;
  });
  const passwordFile = pathSchema(ctx).transform(async (file, zctx) => {
    try {
      const password = (await readFile(file, 'utf8')).replace(/\r?\n$/, '');
      if (password === '') throw new Error('the file is empty');
      registerSecret(password);
      return { file, password };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (error as Error).message;
      zctx.addIssue({ code: 'custom', message: `cannot read the PostgreSQL password file ${file} (${why})` });
      return z.NEVER;
    }
  });
  const password = z.string().transform((value) => {
    if (value === '') return undefined; // "${PG_PASSWORD:-}" unset: no password
    registerSecret(value);
    return value;
  });
  const caFile = pathSchema(ctx).transform(async (file, zctx) => {
    const result = await readCaFile(file);
    if (!result.ok) zctx.addIssue({ code: 'custom', message: result.message });
    return file;
  });
  return z
    .strictObject({
      url,
      password: password.optional(),
      password_file: passwordFile.optional(),
      schema: z
        .string()
        .regex(SCHEMA_NAME, 'a schema name of lower-case letters, digits and _ (at most 63), not starting with a digit')
        .default('pricing_agent'),
      sslmode: z.enum(SSL_MODES).optional(),
      ca_file: caFile.optional(),
      pool_size: z.int().min(2).max(100).default(10),
      connect_timeout_ms: z.int().min(1_000).max(300_000).default(10_000), // 10 s
      statement_timeout_ms: z.int().min(1_000).max(3_600_000).default(60_000), // 60 s
    })
    .transform((pg, zctx): PostgresConfig => {
      if (pg.password !== undefined && pg.password_file !== undefined) {
        zctx.addIssue({ code: 'custom', message: 'set either state.postgres.password or password_file, not both', path: ['password_file'] });
        return z.NEVER;
      }
      const sslmode = pg.sslmode ?? defaultSslMode(pg.url);
      if (pg.ca_file !== undefined && sslmode !== 'verify-ca' && sslmode !== 'verify-full') {
        zctx.addIssue({ code: 'custom', message: 'state.postgres.ca_file is used only with sslmode verify-ca or verify-full', path: ['ca_file'] });
        return z.NEVER;
      }
      return {
        url: pg.url,
        password: pg.password ?? pg.password_file?.password ?? null,
        password_file: pg.password_file?.file ?? null,
        schema: pg.schema,
        sslmode,
        ca_file: pg.ca_file ?? null,
        pool_size: pg.pool_size,
        connect_timeout_ms: pg.connect_timeout_ms,
        statement_timeout_ms: pg.statement_timeout_ms,
      };
    });
}

export function stateSchema(ctx: SectionContext) {
  return z
    .strictObject({
      /** This node's own files (and the SQLite database); relative to the config file's directory. */
      dir: pathSchema(ctx).prefault('./state'),
      backend: z.enum(STATE_BACKENDS).default('sqlite'),
      /** Also read with backend sqlite: `pricing-agent state migrate --to postgres` copies the state there. */
      postgres: postgresSchema(ctx).optional(),
    })
    .transform((state, zctx) => {
      if (state.backend === 'postgres' && state.postgres === undefined) {
        zctx.addIssue({ code: 'custom', message: 'state.backend is postgres: set state.postgres.url (and its password)', path: ['postgres'] });
        return z.NEVER;
      }
      return { dir: state.dir, backend: state.backend, postgres: state.postgres ?? null };
    });
}
