/**
 * Crash safety of push, with real processes: `pricing-agent push FILE --source S` runs as a child process against a
 * sandbox in the test process and is SIGKILLed at several points (right after the claim while reading, after N
 * committed batches, while its import job runs); running the same command again resumes the file. In the end the
 * sandbox holds every valid row exactly once by business key, no competitor price twice, and the final report's
 * counts are right.
 *
 * The kill points are found by watching the child's state database through a read-only connection (the committed
 * batches, the file's status and job id): the test waits for what the agent committed, never for a timer. So a kill
 * lands at its point in a small file too: inside `npm test` the files are a tenth or a fifth of their full size, with
 * batches as much smaller, so the kills fall after the same numbers of batches; `npm run test:crash` runs the full
 * sizes (test/support/crash-size.ts).
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.ts';
import { competitorPricesFile, transactionsFile, writeAgentConfig } from '../fixtures/push/push-fixtures.ts';
import { expectReconciled, readReport, rejectLines } from '../fixtures/push/push-report.ts';
import { crashSize } from '../support/crash-size.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { ledger, startAgent, waitForLedger } from '../support/push-child.ts';
import { until } from '../support/test-logger.ts';

const CRASH_TIMEOUT_MS = 120_000;
/** Transactions pushed in bulk (one in 997 invalid), and their batch size. */
const BULK = crashSize({ rows: 20_000, batch: 100 }, { rows: 200_000, batch: 1000 });
/** Competitor prices, and their batch size. */
const COMPETITOR = crashSize({ rows: 4000, batch: 100 }, { rows: 20_000, batch: 500 });
/** Transactions pushed as an import (one in 1000 invalid); the sandbox's job writes a quarter of them per tick. */
const IMPORT_ROWS = crashSize(20_000, 100_000);

async function setUp(sandbox: SandboxHandle, source: Record<string, unknown>): Promise<{ dir: string; inbox: string; config: string; dbPath: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'pa-push-crash-'));
  const inbox = join(dir, 'inbox');
  await mkdir(inbox, { recursive: true });
  const config = await writeAgentConfig(dir, sandbox.url, [{ name: 'crash', path: './inbox', ...source }]);
  return { dir, inbox, config, dbPath: join(dir, 'state', 'pricing-agent.db') };
}

function expectExactlyOnce(actual: readonly string[], expected: readonly string[]): void {
  expect(new Set(actual).size, 'no business key twice').toBe(actual.length);
  expect(actual.length).toBe(expected.length);
  expect([...actual].sort()).toEqual([...expected].sort());
}

describe('push survives SIGKILL (bulk)', () => {
  let sandbox: SandboxHandle;
  beforeAll(async () => {
    sandbox = await startSandbox({ approvals: 0, largeGridRows: 0 });
  });
  afterAll(() => sandbox.close());

  it(`${BULK.rows} transactions: killed while reading right after the claim, after 40 and after 120 batches; every valid row once`, { timeout: CRASH_TIMEOUT_MS }, async () => {
    const { inbox, config, dbPath } = await setUp(sandbox, { entity: 'transactions', batch_size: BULK.batch });
    const file = await transactionsFile(join(inbox, 'kasse.csv'), BULK.rows, { prefix: 'CR', invalidEvery: 997 });
    const args = ['push', file.path, '--source', 'crash', '--config', config, '--json'];
    const requestsBefore = sandbox.control.state().requests.total;
    const killedAt: number[] = [];

    for (const target of [0, 40, 120]) {
      const agent = startAgent(args, sandbox.apiKey);
      const seen = await waitForLedger(agent, dbPath, `${target} committed batches`, (l) => l.started && l.batches >= target);
      await agent.kill();
      killedAt.push(ledger(dbPath).batches);
      expect(seen.status).not.toBe('done');
    }
    expect(existsSync(file.path), 'the file was claimed into processing/').toBe(false);
    expect(killedAt[1]).toBeLessThan(killedAt[2] ?? 0);

    const last = await startAgent(args, sandbox.apiKey).exited;
    expect(last.code, last.stderr).toBe(3);
    const out = JSON.parse(last.stdout) as { outcome: string; report: string; rejects: string; rows: Record<string, number> };
    const valid = file.validKeys.length;
    const invalid = file.invalidLines.length;
    expect(invalid).toBe(Math.floor(BULK.rows / 997));
    expect(out).toMatchObject({ outcome: 'done', rows: { read: BULK.rows, sent: valid, accepted: valid, rejected: invalid, rejected_locally: invalid, superseded: 0 } });
    const report = await readReport(out.report);
    expectReconciled(report.rows);
    const rejects = await rejectLines(out.rejects);
    expect(rejects.slice(1).map((l) => Number(l.split(',')[0]))).toEqual(file.invalidLines);
    expect(ledger(dbPath).batches).toBe(Math.ceil(valid / BULK.batch));
    expect(await readdir(join(inbox, 'processing'))).toEqual([]);

    const keys = (sandbox.control.state({ keys: true }).transactions.keys ?? []).filter((k) => k.startsWith('CR-'));
    expectExactlyOnce(keys, file.validKeys);
    // Resumed at the checkpoints, not from the start: at most the batches in flight at each kill were sent again.
    const requests = sandbox.control.state().requests.total - requestsBefore;
    expect(requests).toBeLessThanOrEqual(Math.ceil(valid / BULK.batch) + 3 * 4);
  });

  it(`${COMPETITOR.rows} competitor prices: killed after 5 and after 20 batches; no competitor price created twice`, { timeout: CRASH_TIMEOUT_MS }, async () => {
    const { inbox, config, dbPath } = await setUp(sandbox, { entity: 'competitor_prices', batch_size: COMPETITOR.batch });
    const file = await competitorPricesFile(join(inbox, 'wettbewerb.csv'), COMPETITOR.rows);
    const args = ['push', file.path, '--source', 'crash', '--config', config, '--json'];
    const before = sandbox.control.state().competitor_prices.count;
    for (const target of [5, 20]) {
      const agent = startAgent(args, sandbox.apiKey);
      await waitForLedger(agent, dbPath, `${target} committed batches`, (l) => l.batches >= target);
      await agent.kill();
    }
    const last = await startAgent(args, sandbox.apiKey).exited;
    expect(last.code, last.stderr).toBe(0);
    const out = JSON.parse(last.stdout) as { rows: Record<string, number> };
    expect(out.rows).toMatchObject({ read: COMPETITOR.rows, sent: COMPETITOR.rows, accepted: COMPETITOR.rows, rejected: 0 });

    const state = sandbox.control.state({ keys: true });
    expect(state.competitor_prices.count).toBe(before + COMPETITOR.rows);
    expect(state.competitor_prices.single_creates).toBe(0);
    const keys = (state.competitor_prices.keys ?? []).filter((k) => k.item_id?.startsWith('ITEM-')).map((k) => `${k.competitor_name}|${k.item_id ?? ''}|${k.observed_at}`);
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe('push survives SIGKILL (import)', () => {
  let sandbox: SandboxHandle;
  let clock: ManualClock;
  beforeAll(async () => {
    clock = new ManualClock();
    // The job only moves when the test advances the sandbox's clock: a quarter of the file per second of it.
    sandbox = await startSandbox({ approvals: 0, largeGridRows: 0, clock, jobPace: { queuedMs: 1000, tickMs: 1000, rowsPerTick: IMPORT_ROWS / 4 } });
  });
  afterAll(() => sandbox.close());

  it(`${IMPORT_ROWS} transactions: killed while writing the upload, then while its job runs; resumed by polling the same job`, { timeout: CRASH_TIMEOUT_MS }, async () => {
    const { inbox, config, dbPath } = await setUp(sandbox, { entity: 'transactions', mode: 'import' });
    const file = await transactionsFile(join(inbox, 'import.csv'), IMPORT_ROWS, { prefix: 'IM', invalidEvery: 1000 });
    const args = ['push', file.path, '--source', 'crash', '--config', config, '--json'];

    const first = startAgent(args, sandbox.apiKey);
    await waitForLedger(first, dbPath, 'the claim', (l) => l.started);
    await first.kill();

    const second = startAgent(args, sandbox.apiKey);
    const { jobId } = await waitForLedger(second, dbPath, 'the job id', (l) => l.jobId !== null);
    if (jobId === null) throw new Error('unreachable');
    const job = () => sandbox.control.world.jobs.get(jobId);
    await clock.advance(1000); // queued -> running: the first quarter of the rows
    await until(() => (job()?.rows_ok ?? 0) >= IMPORT_ROWS / 4, 'the job to write its first rows');
    expect(job()?.status).toBe('running');
    await second.kill();

    while (job()?.status === 'running') {
      await clock.advance(1000);
      await until(() => job()?.status !== 'running' || clock.waiting > 0, 'the next tick of the job');
    }
    expect(job()).toMatchObject({ status: 'completed', rows_ok: file.validKeys.length });

    const jobsBefore = sandbox.control.state().jobs['count'];
    const last = await startAgent(args, sandbox.apiKey).exited;
    expect(last.code, last.stderr).toBe(3);
    const out = JSON.parse(last.stdout) as { job_id: string; report: string; rows: Record<string, number> };
    const valid = file.validKeys.length;
    const invalid = IMPORT_ROWS / 1000;
    expect(out).toMatchObject({ job_id: jobId, rows: { read: IMPORT_ROWS, sent: valid, accepted: valid, rejected: invalid, rejected_locally: invalid } });
    expectReconciled((await readReport(out.report)).rows);
    expect(sandbox.control.state().jobs['count']).toBe(jobsBefore);
    expect(jobsBefore).toBeLessThanOrEqual(2); // a second job only if the first kill landed inside the upload

    const keys = (sandbox.control.state({ keys: true }).transactions.keys ?? []).filter((k) => k.startsWith('IM-'));
    expectExactlyOnce(keys, file.validKeys);
  });
});
