/**
 * Global setup of the whole run (vitest.config.ts): one folder under the system's temp folder holds every temp folder
 * of the run (TMPDIR for the workers and every child process they start: agents, PostgreSQL clusters, the browser),
 * removed when the run ends. Tests clean up after themselves where they can, but harnesses closed by a failed test,
 * children killed with SIGKILL and cluster folders owned by the postgres user left folders in /tmp run after run.
 *
 * A run with a failed test keeps the folder and prints where it is: the chaos run and the crash tests leave their
 * state databases, inboxes and logs there for the post-mortem.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

export default function setup(project: TestProject): () => void {
  const root = mkdtempSync(join(tmpdir(), 'pa-test-run-'));
  // The postgres user (initdb and the server refuse to run as root: test/support/postgres-cluster.ts) must reach the
  // cluster folders inside.
  chmodSync(root, 0o711);
  const outer = process.env['TMPDIR'];
  process.env['TMPDIR'] = root;
  return () => {
    if (outer === undefined) delete process.env['TMPDIR'];
    else process.env['TMPDIR'] = outer;
    if (project.vitest.state.getCountOfFailedTests() > 0) {
      process.stderr.write(`[run-temp-root] tests failed: the run's temp folders are kept in ${root}\n`);
      return;
    }
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  };
}
