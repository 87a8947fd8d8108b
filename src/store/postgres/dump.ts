/**
 * `state backup` and `state restore` of a PostgreSQL state, with PostgreSQL's own tools from PATH: pg_dump writes the
 * agent's schema only, in pg_dump's custom format (a dump a database administrator already knows how to handle), and
 * pg_restore puts it back in one transaction. Without the tool on PATH the error is the command to run, in one
 * sentence (docs/upgrade.md).
 *
 * The password goes to the tool in PGPASSWORD, never on its command line (other users of the machine can read a
 * command line in ps); sslmode and the CA file as libpq's PGSSLMODE and PGSSLROOTCERT, as the agent connects.
 * A dump is written to a temporary name and renamed, so a crash or a failed dump leaves no half file under the name.
 *
 * A restore sets the schema as it is aside (renamed), restores the dump into a new schema of its name in one
 * transaction, then drops the old one; a failed restore renames it back. Not pg_restore --clean: it drops only the
 * objects the dump holds, and a schema upgraded since (a table a newer migration added) then refused to go.
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type { PostgresConfig } from '../../config/state-schema.ts';
import { StoreError } from '../errors.ts';
import { createPool, quoteIdent } from './pool.ts';

/** A dump of a large state takes minutes; a tool that hangs longer than this is stopped. */
const TOOL_TIMEOUT_MS = 60 * 60_000;

function toolEnv(config: PostgresConfig): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PGSSLMODE: config.sslmode, PGAPPNAME: 'pricing-agent state' };
  if (config.password !== null) env['PGPASSWORD'] = config.password;
  if (config.ca_file !== null) env['PGSSLROOTCERT'] = config.ca_file;
  return env;
}

/** The command a person runs instead, when the tool is not on PATH. */
export function manualCommand(config: PostgresConfig, verb: 'backup' | 'restore', file = 'FILE'): string {
  return verb === 'backup'
    ? `pg_dump --schema=${config.schema} --format=custom --file=${file} ${config.url}`
    : `DROP SCHEMA ${config.schema} CASCADE, then pg_restore --single-transaction --no-owner --dbname=${config.url} ${file}, with the agent stopped`;
}

/** Runs the tool; resolves to what it printed on stdout. */
function run(tool: string, args: readonly string[], config: PostgresConfig, verb: 'backup' | 'restore', file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(tool, args, { env: toolEnv(config), timeout: TOOL_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error === null) return resolve(stdout);
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        return reject(new StoreError('MISSING', `${tool} is not on PATH: install PostgreSQL's client tools, or run ${manualCommand(config, verb, file)}`));
      }
      const said = stderr.trim().split('\n').filter((line) => line !== '').slice(-3).join('; ');
      reject(new StoreError('TOOL_FAILED', `${tool} failed: ${said === '' ? error.message : said}`, { cause: error }));
    });
  });
}

/** Dumps the agent's schema to `to` (0600: it holds what the state holds). */
export async function dumpPostgres(config: PostgresConfig, to: string): Promise<void> {
  mkdirSync(dirname(to), { recursive: true, mode: 0o750 });
  const partial = `${to}.partial`;
  try {
    await run('pg_dump', [`--schema=${config.schema}`, '--format=custom', `--file=${partial}`, `--dbname=${config.url}`], config, 'backup', to);
    chmodSync(partial, 0o600);
    renameSync(partial, to);
  } finally {
    rmSync(partial, { force: true });
  }
}

/**
 * Puts the dump `file` back in place of the agent's schema (the caller made sure no agent runs). A dump holds the
 * name of the schema it was taken from and restores into that one: a dump of another schema is refused, so that a
 * restore never replaces a schema the config does not name.
 */
export async function restorePostgres(config: PostgresConfig, file: string): Promise<void> {
  if (!existsSync(file)) throw new StoreError('MISSING', `${file}: no such file`);
  // pg_restore --list prints the archive's table of contents, e.g. "215; 2615 16385 SCHEMA - pricing_agent postgres".
  const contents = await run('pg_restore', ['--list', file], config, 'restore', file);
  const schemas = [...contents.matchAll(/^\d+; \d+ \d+ SCHEMA - (\S+) /gm)].map((m) => m[1]);
  if (schemas.length !== 1 || schemas[0] !== config.schema) {
    const what = schemas.length === 0 ? 'holds no schema' : `is a dump of schema ${schemas.join(', ')}`;
    throw new StoreError('INVALID_ARGUMENT', `${file} ${what}, and the state is in schema ${config.schema}: restore a backup taken by state backup with this config`);
  }
  const aside = `${config.schema}_before_restore`.slice(0, 63);
  const pool = createPool({ ...config, pool_size: 1 });
  try {
    const exists = (await pool.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [config.schema])).rowCount === 1;
    await pool.query(`DROP SCHEMA IF EXISTS ${quoteIdent(aside)} CASCADE`);
    if (exists) await pool.query(`ALTER SCHEMA ${quoteIdent(config.schema)} RENAME TO ${quoteIdent(aside)}`);
    try {
      await run('pg_restore', ['--single-transaction', '--exit-on-error', '--no-owner', `--dbname=${config.url}`, file], config, 'restore', file);
    } catch (error) {
      if (exists) await pool.query(`ALTER SCHEMA ${quoteIdent(aside)} RENAME TO ${quoteIdent(config.schema)}`);
      throw error;
    }
    if (exists) await pool.query(`DROP SCHEMA ${quoteIdent(aside)} CASCADE`);
  } finally {
    await pool.end();
  }
}
