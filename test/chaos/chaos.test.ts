/**
 * The chaos scenario (runner.ts) at a small fixed size inside `npm test`, against the sandbox's default dialect: 10
 * SIGKILLs in 30 s of faults, 429 bursts, a key rotation, 12 files and approvals changing, then every check of the
 * full run. The other dialects (src/sandbox/dialect.ts: every reading of the API document the agent must survive)
 * and the long runs are `npm run test:chaos -- --dialect all|NAME` (docs/reliability.md): one run per dialect here
 * took two and a half minutes of the suite's five.
 */
import { expect, it } from 'vitest';
import { formatTable } from './checks.ts';
import { runChaos } from './runner.ts';

it('nothing lost, duplicated or leaked through 10 SIGKILLs, faults, 429 bursts and a key rotation (seed 7)', { timeout: 150_000 }, async () => {
  const result = await runChaos({ seed: 7, kills: 10, durationMs: 30_000, files: 12, rows: 80, settleTimeoutMs: 60_000, dialect: 'default' });
  const table = formatTable(result.checks);
  expect(result.checks.filter((c) => c.ok === false), `${table}\nrun folder: ${result.dir}`).toEqual([]);
  expect(result.record.kills).toBeGreaterThanOrEqual(10);
});
