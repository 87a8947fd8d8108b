/**
 * `--backend postgres` of bench:push and bench:pull: a throwaway PostgreSQL cluster on this machine (as the issue's
 * target says: the database on the same machine), durable like a production server (fsync and synchronous commits
 * on, as SQLite's synchronous=FULL), so that both backends pay for durability; and the `state:` section of an agent
 * that keeps its state in a schema of it.
 */
import type { Config } from '../src/config/index.ts';
import { createTemplate, removeTemplate, startCluster } from '../test/support/postgres-cluster.ts';

export const BACKENDS = ['sqlite', 'postgres'] as const;
export type Backend = (typeof BACKENDS)[number];

export interface BenchPostgres {
  readonly url: string;
  stop(): void;
}

export async function startBenchPostgres(): Promise<BenchPostgres> {
  const template = createTemplate();
  try {
    const cluster = await startCluster(template, { durable: true });
    return { url: cluster.url, stop: () => cluster.stop() };
  } finally {
    removeTemplate(template);
  }
}

/** The state of an agent run: SQLite in `dir`, or a fresh schema named `schema` of the cluster at `url`. */
export function benchState(dir: string, postgres: { url: string; schema: string } | null): Config['state'] {
  if (postgres === null) return { dir, backend: 'sqlite', postgres: null };
  return {
    dir,
    backend: 'postgres',
    postgres: {
      url: postgres.url,
      password: null,
      password_file: null,
      schema: postgres.schema,
      sslmode: 'disable',
      ca_file: null,
      pool_size: 10,
      connect_timeout_ms: 10_000,
      statement_timeout_ms: 60_000,
    },
  };
}
