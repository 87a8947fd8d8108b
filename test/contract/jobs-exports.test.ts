/**
 * Jobs and transaction exports through the client, on a sandbox with a paced job clock (a ManualClock: time moves
 * only when the test advances it, so no test sleeps). An import job is polled with jobs.get through queued ->
 * running -> completed (or failed); cancel returns the strict export status object (queued -> cancelled, running ->
 * cancelling -> cancelled one tick later) and refuses a non-UUID id, locally in the client and with 422 in the
 * sandbox.
 */
import { describe, expect, it } from 'vitest';
import { API_ERROR_CODES } from '../../src/api/errors.ts';
import { ExportStatus, type Job } from '../../src/api/schemas/index.ts';
import type { ExportState } from '../../src/sandbox/exports.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { contractForFile, errorOf, ownedOperationsTest, uuidOf } from './support.ts';

const TICK_MS = 1000; // 1 s per tick of the job clock
const clock = new ManualClock(Date.parse('2026-11-22T10:00:00Z'));
const h = contractForFile('jobs-exports', { clock, jobPace: { queuedMs: TICK_MS, tickMs: TICK_MS, rowsPerTick: 2 } });

/** Polls the job, advancing the job clock one tick whenever it is not finished; returns every state seen. */
async function driveJob(jobId: string, maxTicks = 50): Promise<Job[]> {
  const seen: Job[] = [];
  for (let tick = 0; tick <= maxTicks; tick += 1) {
    const job = await h.client.jobs.get(jobId);
    expect(h.lastStatus('jobs.get')).toBe(200);
    seen.push(job);
    if (job.status === 'completed' || job.status === 'failed') return seen;
    await clock.untilWaiting(1); // the job has reached its next wait on the clock
    await clock.advance(TICK_MS);
  }
  throw new Error(`job ${jobId} did not finish within ${maxTicks} ticks`);
}

describe('jobs.get', () => {
  it('shows a paced import queued, then running with partial progress, then completed at 100', async () => {
    const rows = Array.from({ length: 5 }, (_, i) => `J-${i},J-${i},Item ${i}`).join('\n');
    const handle = await h.client.products.import(await h.csv('products.csv', `item_id,sku,product_name\n${rows}\n`));
    const seen = await driveJob(handle.job_id);
    const first = seen[0];
    const last = seen.at(-1);
    expect(first).toMatchObject({ job_id: handle.job_id, job_type: 'import_products', status: 'queued', progress: 0, started_at: null });
    expect(first?.created_at).toBe('2026-11-22T10:00:00.000Z');
    const running = seen.filter((j) => j.status === 'running');
    expect(running.length).toBeGreaterThan(0);
    for (const j of running) {
      expect(j.progress).toBeGreaterThan(0);
      expect(j.progress).toBeLessThan(100);
    }
    expect(last).toMatchObject({ status: 'completed', progress: 100, rows_total: 5, rows_ok: 5, rows_failed: 0 });
    expect(last?.started_at).toBe('2026-11-22T10:00:01.000Z');
    // Statuses only move forward.
    const order = ['queued', 'running', 'completed'];
    const ranks = seen.map((j) => order.indexOf(j.status));
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
  });

  it('shows a job that fails on its header as failed, with the reason', async () => {
    const handle = await h.client.transactions.import(await h.csv('bad-header.csv', 'transaction_id,item_id\nT-1,I-1\n'));
    const last = (await driveJob(handle.job_id)).at(-1);
    expect(last).toMatchObject({ status: 'failed', job_type: 'import_transactions' });
    expect(last?.error).toContain('transaction_timestamp');
  });

  it('answers 404 for an unknown job id; a non-UUID is refused locally and by the sandbox with 422', async () => {
    await expect(errorOf(() => h.client.jobs.get(uuidOf(7)))).resolves.toMatchObject({ code: API_ERROR_CODES.notFound, status: 404 });
    const before = h.responseCount();
    await expect(errorOf(() => h.client.jobs.get('job-7'))).resolves.toMatchObject({ code: API_ERROR_CODES.localValidation });
    expect(h.responseCount()).toBe(before);
    const raw = await h.raw('GET', '/v1/jobs/job-7');
    expect(raw).toEqual({ status: 422, body: { detail: [expect.objectContaining({ loc: ['path', 'job_id'], type: 'uuid_parsing' })] } });
  });
});

const REQUIRED = ['export_id', 'job_id', 'status', 'rows_written', 'total_rows', 'expires_at'];
const ALLOWED = new Set([...REQUIRED, 'error']);

function seededExport(status: ExportState): ExportStatus {
  const found = h.sandbox.control.state({ keys: false }).exports.find((e) => e.status === status);
  if (!found) throw new Error(`no seeded export in status ${status}`);
  return found;
}

/** The raw body has exactly the spec's properties: the client's strict schema is checked on the wire too. */
async function cancelRaw(exportId: string): Promise<Record<string, unknown>> {
  const res = await h.raw('POST', `/v1/transactions/exports/${exportId}/cancel`);
  expect(res.status).toBe(200);
  const body = res.body as Record<string, unknown>;
  for (const key of REQUIRED) expect(body).toHaveProperty(key);
  expect(Object.keys(body).filter((key) => !ALLOWED.has(key))).toEqual([]);
  return body;
}

describe('transactionExports.cancel', () => {
  it('cancels a queued export at once: 200 with the status object, no additional properties', async () => {
    const queued = seededExport('queued');
    const status = await h.client.transactionExports.cancel(queued.export_id);
    expect(h.lastStatus('transactionExports.cancel')).toBe(200);
    expect(ExportStatus.parse(status)).toEqual({ ...queued, status: 'cancelled' });
    expect(await cancelRaw(queued.export_id)).toMatchObject({ status: 'cancelled', total_rows: null });
  });

  it('moves a running export to cancelling, then to cancelled one job tick later', async () => {
    const running = seededExport('running');
    await expect(h.client.transactionExports.cancel(running.export_id)).resolves.toMatchObject({ status: 'cancelling' });
    await clock.untilWaiting(1);
    await clock.advance(TICK_MS);
    await expect(h.client.transactionExports.cancel(running.export_id)).resolves.toEqual({ ...running, status: 'cancelled' });
  });

  it('returns a finished export unchanged with 200 (completed, failed with its error, expired)', async () => {
    for (const state of ['completed', 'failed', 'expired'] as const) {
      const seeded = seededExport(state);
      await expect(h.client.transactionExports.cancel(seeded.export_id)).resolves.toEqual(seeded);
      expect(await cancelRaw(seeded.export_id)).toEqual(seeded);
    }
    expect(seededExport('failed').error).toEqual(expect.any(String) as unknown);
  });

  it('refuses a non-UUID id locally; the sandbox itself answers 422 on path.export_id', async () => {
    const before = h.responseCount();
    const error = await errorOf(() => h.client.transactionExports.cancel('export-42'));
    expect(error).toMatchObject({ code: API_ERROR_CODES.localValidation, operation: 'transactionExports.cancel', status: undefined });
    expect(h.responseCount()).toBe(before);
    const raw = await h.raw('POST', '/v1/transactions/exports/export-42/cancel');
    expect(raw).toEqual({
      status: 422,
      body: { detail: [{ loc: ['path', 'export_id'], msg: 'Input should be a valid UUID', type: 'uuid_parsing', input: 'export-42' }] },
    });
  });

  it('answers 404 for an export id it does not know', async () => {
    await expect(errorOf(() => h.client.transactionExports.cancel(uuidOf(42)))).resolves.toMatchObject({
      code: API_ERROR_CODES.notFound,
      status: 404,
    });
  });
});

ownedOperationsTest(() => h);
