/**
 * Every benchmark at a tiny size (bench/smoke.ts, `npm run bench:smoke`): a bench that stops running or stops printing
 * its result line fails CI. Its figures are not judged here; the benches compare them against a baseline of their own
 * run when run at full size (docs/performance.md).
 */
import { describe, expect, it } from 'vitest';
import { resultLineProblem, runSmoke, SMOKE_RUNS } from '../../bench/smoke.ts';

describe('the result line check', () => {
  it('takes a last line with every key and a number each', () => {
    expect(resultLineProblem('push', ['ratio', 'agent_rss_mb'], 'round 1\nbench:push agent=1 minimal=2 ratio=0.50 agent_rss_mb=140\n')).toBeNull();
  });

  it('refuses a missing line, another bench\'s line, a missing key and a value that is not a number', () => {
    expect(resultLineProblem('push', ['ratio'], 'done\n')).toMatch(/not "bench:push/);
    expect(resultLineProblem('push', ['ratio'], 'bench:pull ratio=1\n')).toMatch(/not "bench:push/);
    expect(resultLineProblem('push', ['ratio', 'agent_rss_mb'], 'bench:push ratio=1\n')).toMatch(/no number for agent_rss_mb/);
    expect(resultLineProblem('push', ['ratio'], 'bench:push ratio=NaN\n')).toMatch(/no number for ratio/);
  });
});

it('every bench runs at a tiny size and prints its result line', { timeout: 300_000 }, async () => {
  const results = await runSmoke();
  expect(results.map((r) => r.name)).toEqual(SMOKE_RUNS.map((r) => r.name));
  expect(results.filter((r) => !r.ok).map((r) => `${r.name}: ${r.detail}`)).toEqual([]);
});
