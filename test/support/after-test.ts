/**
 * Cleanups of the test that is running (temp folders, state databases), run after it, the last registered first, by
 * test/support/after-test-setup.ts: a setup file, which Vitest runs again for every test file.
 *
 * Not a module-level `afterEach` in a support module: test files share their worker process (vitest.config.ts,
 * `isolate: false`), where a support module is loaded once, so its hook was registered for the first file that
 * imported it only. Every later file's state databases stayed open (a pool's idle connections then failed inside
 * another file once their PostgreSQL cluster stopped) and its folders stayed on disk. test/unit/shared-worker.test.ts
 * fails when a support module registers a hook at its top level again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const pending: (() => Promise<void> | void)[] = [];

/** Runs `cleanup` once the current test (or the hook that calls this) has ended. */
export function afterThisTest(cleanup: () => Promise<void> | void): void {
  pending.push(cleanup);
}

/** Runs and forgets every registered cleanup, the last registered first. */
export async function runCleanups(): Promise<void> {
  for (const cleanup of pending.splice(0).reverse()) await cleanup();
}

/** A fresh folder under the system's temp folder, removed with all it holds after the current test. */
export function tempDirForTest(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterThisTest(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
