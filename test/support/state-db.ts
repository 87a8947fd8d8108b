/**
 * The state database of a test, on the backend the test run is for: SQLite in the test's temp folder, or (the
 * `postgres` Vitest project, PRICING_AGENT_TEST_BACKEND=postgres) a schema of its own in this test file's throwaway
 * PostgreSQL cluster (test/support/postgres-cluster.ts), named after the temp folder so that reopening the same
 * folder reopens the same state.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Config } from '../../src/config/index.ts';
import { openStateDb } from '../../src/store/open-state-db.ts';
import type { StateDb } from '../../src/store/state-db.ts';
import { startCluster, type TestCluster } from './postgres-cluster.ts';
import { until } from './test-logger.ts';

export type TestBackend = 'sqlite' | 'postgres';

/** The backend of this test run. */
export const TEST_BACKEND: TestBackend = process.env['PRICING_AGENT_TEST_BACKEND'] === 'postgres' ? 'postgres' : 'sqlite';

export interface TestDbOptions {
  readonly?: boolean;
  /** Milliseconds since the epoch (the test's clock). */
  now?: () => number;
}

let template: string | null = null;
let cluster: Promise<TestCluster> | null = null;

/** The initdb'd template of this run (given by the postgres project's global setup). */
export function useClusterTemplate(path: string): void {
  template = path;
}

/** This test file's cluster, started on first use. */
export function testCluster(): Promise<TestCluster> {
  if (template === null) throw new Error('no PostgreSQL template: run the test through the postgres Vitest project');
  cluster ??= startCluster(template);
  return cluster;
}

/** How long a connection of a process that already ended may still be listed: the server notices its closed socket. */
const CLOSED_CONNECTION_GRACE_MS = 5_000;

/**
 * The connections still open to this file's cluster at the end of the file (none when it started no cluster), each
 * as `application_name (state): query`. A process that ended (a killed agent) may be listed for a moment after its
 * exit: asked again until none is left, for up to CLOSED_CONNECTION_GRACE_MS. What stays open is a state database
 * the test never closed: its idle pool connections would fail, once the cluster stops, inside whichever file runs
 * next in the worker.
 */
export async function connectionsLeftOpen(): Promise<string[]> {
  if (cluster === null) return [];
  const client = new pg.Client({ connectionString: (await cluster).url, application_name: 'test-connection-probe' });
  await client.connect();
  let open: string[] = [];
  const listOpen = async () => {
    const { rows } = await client.query<{ who: string }>(
      "SELECT application_name || ' (' || coalesce(state, '?') || '): ' || left(query, 80) AS who FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
    );
    open = rows.map((row) => row.who);
    return open.length === 0;
  };
  try {
    await until(listOpen, 'the connections to close', CLOSED_CONNECTION_GRACE_MS).catch(() => undefined); // what is left: `open`
    return open;
  } finally {
    await client.end();
  }
}

/** Stops this test file's cluster (the postgres project's setup file does, after the file). */
export async function stopTestCluster(): Promise<void> {
  const running = cluster;
  cluster = null;
  if (running) (await running).stop();
}

/** The schema of the state kept for `dir`. */
export function schemaFor(dir: string): string {
  return `t_${createHash('sha256').update(dir).digest('hex').slice(0, 20)}`;
}

/** The `state:` section of a config for `dir` on this run's backend (as loaded: absolute paths). */
export async function testStateConfig(dir: string): Promise<Config['state']> {
  if (TEST_BACKEND === 'sqlite') return { dir, backend: 'sqlite', postgres: null };
  const { url } = await testCluster();
  return {
    dir,
    backend: 'postgres',
    postgres: {
      url,
      password: null,
      password_file: null,
      schema: schemaFor(dir),
      sslmode: 'disable',
      ca_file: null,
      pool_size: 10,
      connect_timeout_ms: 10_000,
      statement_timeout_ms: 60_000,
    },
  };
}

/**
 * The `state:` section as YAML lines for a config file a child process loads (`dir` relative to the config file
 * or absolute, as written).
 */
export async function testStateYaml(dir: string, absoluteDir: string = dir): Promise<string> {
  if (TEST_BACKEND === 'sqlite') return `state:\n  dir: ${dir}\n`;
  const { url } = await testCluster();
  return `state:\n  dir: ${dir}\n  backend: postgres\n  postgres:\n    url: ${url}\n    schema: ${schemaFor(absoluteDir)}\n`;
}

/** Opens (creating and migrating it unless read-only) the state kept for `dir`. */
export async function openTestDb(dir: string, options: TestDbOptions = {}): Promise<StateDb> {
  return openStateDb(await testStateConfig(dir), options);
}
