/**
 * The HA chaos proof (ha-runner.ts) at a small fixed size, under `npm run test:postgres` and `npm run test:all` (a
 * long run: not in `npm test`, where test/integration/ha-failover.test.ts proves the failover): two agents of an HA
 * pair on one PostgreSQL state, 10 SIGKILLs of the active node and 3 SIGSTOPs past its lease in 40 s of faults, 8 files and
 * approvals changing, then every check. The long runs are `npm run test:chaos -- --ha` (docs/reliability.md). The
 * postgres project only.
 */
import { expect, it } from 'vitest';
import { TEST_BACKEND } from '../support/state-db.ts';
import { formatTable } from './checks.ts';
import { runHaChaos } from './ha-runner.ts';

it.runIf(TEST_BACKEND === 'postgres')(
  'an HA pair: nothing lost, duplicated or sent by a paused active through 10 SIGKILLs and 3 SIGSTOPs of the active (seed 11)',
  { timeout: 300_000 },
  async () => {
    const result = await runHaChaos({ seed: 11, kills: 10, stops: 3, durationMs: 40_000, files: 8, rows: 60, settleTimeoutMs: 90_000 });
    const table = formatTable(result.checks);
    expect(result.checks.filter((c) => c.ok === false), `${table}\nrun folder: ${result.dir}`).toEqual([]);
    expect(result.record.kills).toBeGreaterThanOrEqual(10);
  },
);
