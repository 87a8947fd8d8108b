import { tmpdir } from 'node:os';
import { join, matchesGlob } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { OWN_PROCESS } from './test/support/own-process.ts';

// Many tests start the CLI as a child process (`node src/cli/main.ts ...`). Node's compile cache keeps the result of
// type stripping and compiling each module between those processes (keyed by the file's content, so an edited file
// is compiled again): a start takes about 0.33 s instead of 0.55 s. Children inherit it from this environment.
process.env['NODE_COMPILE_CACHE'] ??= join(tmpdir(), 'pricing-agent-test-compile-cache');

/**
 * Without cached durations (a clean clone, as in CI) Vitest runs the largest files first. The chaos scenario and the
 * benches at a tiny size are small files that run for half a minute or more, so they started last and the suite ended
 * later than it had to (in a clean run the benches' file ended last, after 34 s of its own). The end-to-end files
 * (test/chaos and test/bench, then test/integration: whole agents, child processes, crash tests) go first; within
 * each group Vitest's own order holds (the slowest first once durations are cached).
 */
class EndToEndFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification) => {
      if (/[/\\]test[/\\](?:chaos|bench)[/\\]/.test(spec.moduleId)) return 0;
      return /[/\\]test[/\\]integration[/\\]/.test(spec.moduleId) ? 1 : 2;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b)); // a stable sort
  }
}

/**
 * Long runs stay out of `npm test`, which must end in about 5 minutes on 2 cores; each has a command of its own and a
 * short run inside `npm test`, and `npm run test:all` switches on every one of the suite's (PRICING_AGENT_LONG_RUNS=1
 * here, and the full sizes of the attack, crash and package tests); the chaos command line and the benches run apart:
 * - the HA chaos proof: `npm run test:chaos -- --ha`; inside, the failover proof (test/integration/ha-failover.test.ts)
 *   and the single-agent chaos run (test/chaos/chaos.test.ts);
 * - the end-to-end files below on PostgreSQL (`npm run test:postgres`): inside, they run on SQLite, and the SQL they
 *   reach runs on PostgreSQL in test/store and the rest of BOTH_BACKENDS;
 * - the crash tests at full size (`npm run test:crash`, test/support/crash-size.ts): inside, at a small size.
 */
const LONG_RUNS = process.env['PRICING_AGENT_LONG_RUNS'] === '1';
const POSTGRES_LONG_RUNS = [
  'test/chaos/ha-chaos.test.ts',
  'test/integration/daemon.test.ts',
  'test/integration/pull-outbox.test.ts',
  'test/integration/feed-crash.test.ts',
  'test/integration/feed-daemon.test.ts',
  'test/delta/delta-push.test.ts',
  'test/delta/delta-lifecycle.test.ts',
];

/**
 * Test files that also run against PostgreSQL (the `postgres` project: the same files with
 * PRICING_AGENT_TEST_BACKEND=postgres, each file with a throwaway cluster of its own, test/support/state-db.ts): the
 * store, push, pull, feed, mirror and daemon files. Files that are about SQLite itself (pragmas, WAL, its migrations
 * from older databases, a POS reading the file from another process) stay SQLite-only.
 */
const BOTH_BACKENDS = [
  'test/store/**/*.test.ts',
  'test/outbox/price-feed.test.ts',
  'test/outbox/docs-sql-postgres.test.ts',
  'test/outbox/store-files.test.ts',
  'test/pull/approved-prices.test.ts',
  'test/pull/mirrors.test.ts',
  'test/pull/reconcile.test.ts',
  'test/feed/consumer-status.test.ts',
  'test/feed/long-poll.test.ts',
  'test/feed/scope.test.ts',
  'test/feed/server.test.ts',
  'test/integration/push-bulk.test.ts',
  'test/integration/push-import.test.ts',
  'test/integration/push-service.test.ts',
  'test/integration/push-claim-recovery.test.ts',
  'test/integration/push-mapping-change.test.ts',
  'test/integration/push-api-faults.test.ts',
  'test/integration/push-row-fates.test.ts',
  'test/integration/push-fix.test.ts',
  'test/delta/delta-push.test.ts',
  'test/delta/delta-lifecycle.test.ts',
  'test/integration/pull-outbox.test.ts',
  'test/integration/daemon.test.ts',
  'test/integration/feed-daemon.test.ts',
  'test/integration/feed-crash.test.ts',
  'test/integration/ha-failover.test.ts',
  'test/integration/ha-feed.test.ts',
  'test/chaos/ha-chaos.test.ts',
  'test/regressions/claim-cut-before-processing-name.test.ts',
  'test/regressions/grid-mirror-with-columns-set.test.ts',
  'test/regressions/long-poll-between-commit-and-announcement.test.ts',
  'test/regressions/rejects-stream-busy-connection.test.ts',
  'test/cli/state-migrate.test.ts',
  'test/cli/state-backup-postgres.test.ts',
  'test/abuse/postgres-reader-role.test.ts',
  'test/abuse/feed-current-snapshot.test.ts',
];
const SQLITE_ONLY = ['test/store/open-sqlite.test.ts', 'test/store/concurrent-open.test.ts', 'test/store/wal-maintenance.test.ts', 'test/store/migrations.test.ts'];
/** Files about PostgreSQL itself (they need a cluster): the postgres project only. */
const POSTGRES_ONLY = [
  'test/store/open-postgres.test.ts',
  'test/store/postgres-tls.test.ts',
  'test/store/copy-state.test.ts',
  'test/cli/state-migrate.test.ts',
  'test/cli/state-backup-postgres.test.ts',
  'test/outbox/docs-sql-postgres.test.ts',
  'test/abuse/postgres-reader-role.test.ts',
  'test/integration/ha-failover.test.ts',
  'test/integration/ha-feed.test.ts',
  'test/chaos/ha-chaos.test.ts',
];

// The postgres project has no variant with a process per file: a file that must run alone runs on SQLite only.
const aloneOnBoth = OWN_PROCESS.filter((file) => BOTH_BACKENDS.some((pattern) => matchesGlob(file, pattern)));
if (aloneOnBoth.length > 0) throw new Error(`${aloneOnBoth.join(', ')} must run in a process of its own: take it out of BOTH_BACKENDS`);

export default defineConfig({
  test: {
    projects: [
      // Files share their worker process and its loaded modules (isolate: false), except those that change the whole
      // process (test/support/own-process.ts), which run in a process each (SQLite only: the postgres project has no
      // such variant). On PostgreSQL a file that leaves a connection open to its cluster fails at its end
      // (test/support/postgres-file-setup.ts): once the cluster stopped, such a pool's idle connections failed as
      // uncaught errors in whichever file the worker ran next.
      { extends: true, test: { name: 'sqlite', isolate: false, include: ['test/**/*.test.ts', 'src/**/*.test.ts'], exclude: [...POSTGRES_ONLY, ...OWN_PROCESS] } },
      { extends: true, test: { name: 'sqlite-own-process', include: OWN_PROCESS } },
      {
        extends: true,
        test: {
          name: 'postgres',
          isolate: false,
          include: BOTH_BACKENDS,
          exclude: LONG_RUNS ? SQLITE_ONLY : [...SQLITE_ONLY, ...POSTGRES_LONG_RUNS],
          env: { PRICING_AGENT_TEST_BACKEND: 'postgres' },
          globalSetup: ['test/support/postgres-global-setup.ts'],
          setupFiles: ['test/support/postgres-file-setup.ts'],
        },
      },
    ],
    // Runs again for every test file, in a shared worker too: the cleanups of test/support/after-test.ts (the
    // postgres project adds its own setup file to this one).
    setupFiles: ['test/support/after-test-setup.ts'],
    // Runs once for the whole run: every temp folder of the run in one folder, removed at its end.
    globalSetup: ['test/support/run-temp-root.ts'],
    // Integration tests start real HTTP servers and child processes, and spend about a third of their time
    // waiting on them: on the 2 cores of CI, 3 workers keep both cores busy where 2 left them idle in those waits.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 3,
    sequence: { sequencer: EndToEndFirst },
  },
});
