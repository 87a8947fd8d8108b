import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Many tests start the CLI as a child process (`node src/cli/main.ts ...`). Node's compile cache keeps the result of
// type stripping and compiling each module between those processes (keyed by the file's content, so an edited file
// is compiled again): a start takes about 0.33 s instead of 0.55 s. Children inherit it from this environment.
process.env['NODE_COMPILE_CACHE'] ??= join(tmpdir(), 'pricing-agent-test-compile-cache');

/**
 * Without cached durations (a clean clone, as in CI) Vitest runs the largest files first. The chaos scenario is a
 * small file that runs for half a minute or more, so it started last and the suite ended ~40 s later than it had to.
 * The end-to-end files (test/chaos, then test/integration: whole agents, child processes, crash tests) go first;
 * within each group Vitest's own order holds (the slowest first once durations are cached).
 */
class EndToEndFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification) => {
      if (/[/\\]test[/\\]chaos[/\\]/.test(spec.moduleId)) return 0;
      return /[/\\]test[/\\]integration[/\\]/.test(spec.moduleId) ? 1 : 2;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b)); // a stable sort
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    // Integration tests start real HTTP servers and child processes, and spend about a third of their time
    // waiting on them: on the 2 cores of CI, 3 workers keep the cores busy (the suite takes ~2 minutes, not ~2.7).
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 3,
    sequence: { sequencer: EndToEndFirst },
  },
});
