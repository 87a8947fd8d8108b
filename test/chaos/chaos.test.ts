/**
 * The chaos scenario (runner.ts) at a small fixed size inside `npm test`, once against each dialect of the sandbox
 * (src/sandbox/dialect.ts: every reading of the API document the agent must survive): 10 SIGKILLs in 30 s of
 * faults, 429 bursts, a key rotation, 12 files and approvals changing, then every check of the full run. The long
 * runs are `npm run test:chaos [-- --dialect NAME]` (docs/reliability.md).
 */
import { expect, it } from 'vitest';
import { DIALECT_NAMES } from '../../src/sandbox/index.ts';
import { formatTable } from './checks.ts';
import { runChaos } from './runner.ts';

it.each(DIALECT_NAMES)('%s: nothing lost, duplicated or leaked through 10 SIGKILLs, faults, 429 bursts and a key rotation (seed 7)', { timeout: 150_000 }, async (dialect) => {
  const result = await runChaos({ seed: 7, kills: 10, durationMs: 30_000, files: 12, rows: 80, settleTimeoutMs: 60_000, dialect });
  const table = formatTable(result.checks);
  expect(result.checks.filter((c) => c.ok === false), `${table}\nrun folder: ${result.dir}`).toEqual([]);
  expect(result.record.kills).toBeGreaterThanOrEqual(10);
});
