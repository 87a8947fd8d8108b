/**
 * Import mode against a paced sandbox: the sandbox and the agent share one ManualClock, so a job goes queued ->
 * running -> completed as the test drives time, and the agent's poll waits follow the spec's pace (30-60 s queued,
 * 5-10 s running) without any real sleep. A failed job fails the file with its detail and is never resubmitted; a
 * rejected key while polling, or an upload failing beyond the retries, defers the file, and the resumed file polls
 * the job it already has instead of uploading again.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { JOB_POLL_QUEUED_MS, JOB_POLL_RUNNING_MS } from '../../src/api/schemas/index.ts';
import { claimFile } from '../../src/ingest/file/claim.ts';
import { processClaimed } from '../../src/ingest/file/push-file.ts';
import { getFile, recordJob } from '../../src/store/push-ledger.ts';
import { usePushHarness } from '../support/push-harness.ts';
import { ManualClock, drive } from '../support/manual-clock.ts';
import { expectReconciled, reportOf } from '../fixtures/push/push-report.ts';

const clock = new ManualClock();
// Sandbox waits (20 s queued, 4 s per row) stay outside the agent's poll ranges, so clock.sleeps tells them apart.
const { h } = usePushHarness({ clock, sandbox: { clock, jobPace: { queuedMs: 20_000, tickMs: 4_000, rowsPerTick: 1 } } });

function transactions(prefix: string, rows: number): string {
  const lines = ['transaction_id,item_id,transaction_timestamp,price'];
  for (let i = 0; i < rows; i += 1) lines.push(`${prefix}-${i},ITEM-${i},2026-11-20T08:00:00Z,1.${String(i % 100).padStart(2, '0')}`);
  return `${lines.join('\n')}\n`;
}

const jobsTotal = () => h.sandbox.control.state().jobs['count'] ?? 0;
const keysWith = (prefix: string) => (h.sandbox.control.state({ keys: true }).transactions.keys ?? []).filter((k) => k.startsWith(`${prefix}-`));
const within = (ms: number, pace: { min: number; max: number }) => ms >= pace.min && ms <= pace.max;

describe('push in import mode', () => {
  it('uploads one job and polls it through queued and running to completed, at the spec pace', async () => {
    const source = await h.source('transactions', { mode: 'import' });
    const jobs = jobsTotal();
    // The phase each poll saw. The clock is driven a minute at a time, so the time between two polls can be longer
    // than the wait the agent chose: the waits are read from clock.sleeps instead.
    const phases: string[] = [];
    const get = h.client.jobs.get.bind(h.client.jobs);
    const spy = vi.spyOn(h.client.jobs, 'get').mockImplementation(async (...args) => {
      const job = await get(...args);
      phases.push(job.phase);
      return job;
    });
    const sleepsBefore = clock.sleeps.length;
    let result;
    try {
      const pushing = h.push(source, 'paced.csv', transactions('PACE', 40));
      await clock.untilWaiting(2); // the job waits in queued, the agent waits to poll it again
      result = await drive(clock, pushing);
    } finally {
      spy.mockRestore();
    }
    const report = await reportOf(result);
    expect(report.job_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(report.rows).toMatchObject({ read: 40, sent: 40, accepted: 40, rejected: 0 });
    expectReconciled(report.rows);
    expect(jobsTotal()).toBe(jobs + 1);
    // One wait after each poll but the last, at the pace of the phase that poll saw: 30-60 s queued, 5-10 s running.
    expect(phases).toEqual(expect.arrayContaining(['queued', 'running']));
    expect(phases.at(-1)).toBe('completed');
    const sleeps = clock.sleeps.slice(sleepsBefore);
    const count = (phase: string) => phases.filter((p) => p === phase).length;
    expect(sleeps.filter((ms) => within(ms, JOB_POLL_QUEUED_MS)), 'waits at the queued pace').toHaveLength(count('queued'));
    expect(sleeps.filter((ms) => within(ms, JOB_POLL_RUNNING_MS)), 'waits at the running pace').toHaveLength(count('running'));
    expect(keysWith('PACE')).toHaveLength(40);
  });

  it('fails the file with the job detail when the job fails, and does not resubmit it', async () => {
    // The agent always uploads a well-formed canonical CSV, so the failed job is one whose upload was accepted
    // before a crash: the ledger holds its id, and the resumed file only polls it.
    const bad = join(h.dir, 'no-price-column.csv');
    await writeFile(bad, 'item_id,store_id\nA,B\n');
    const { job_id: jobId } = await h.client.productStore.import(bad);
    const source = await h.source('product_store', { mode: 'import' });
    const [store] = h.sandbox.control.state().stores;
    const path = join(source.inbox, 'prices.csv');
    await writeFile(path, `item_id,store_id,current_price\nJF-1,${store},1.00\n`);
    const claim = await claimFile(h.db, source, path);
    if (claim.kind !== 'claimed') throw new Error(claim.kind);
    await recordJob(h.db, claim.fileId, jobId);
    const jobs = jobsTotal();

    const result = await drive(clock, processClaimed(h.deps, source, claim.fileId));
    const report = await reportOf(result, 'failed');
    expect(result.outcome === 'failed' && result.file.final_path).toBe(join(source.inbox, 'failed', 'prices.csv'));
    expect(report.job_id).toBe(jobId);
    expect(report.error).toEqual({
      code: 'IMPORT_JOB_FAILED',
      message: `import job ${jobId} failed: missing required column(s): current_price; none of the 1 rows sent is counted as written`,
    });
    expect(report.rows).toMatchObject({ read: 1, sent: 1, accepted: 0, rejected_by_api: 1 });
    expect(jobsTotal()).toBe(jobs);
    expect(h.sandbox.control.state().jobs['failed']).toBeGreaterThanOrEqual(1);
  });

  it('a key rotated while the job runs defers the file with its job id; the resumed file polls the same job', async () => {
    const source = await h.source('transactions', { mode: 'import' });
    const jobs = jobsTotal();
    const pushing = h.push(source, 'rotated.csv', transactions('ROT', 10));
    await clock.untilWaiting(2); // the sandbox holds the job in queued, the agent waits to poll it again
    const newKey = h.sandbox.control.rotateKey();
    const deferred = await drive(clock, pushing);
    expect(deferred.outcome).toBe('deferred');
    if (deferred.outcome !== 'deferred') return;
    expect(deferred.error.code).toBe('API_KEY_REJECTED');
    expect(deferred.file).toMatchObject({ status: 'waiting_job', job_id: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown });
    expect(existsSync(deferred.file.processing_path)).toBe(true);

    h.client.transport.setApiKey(newKey);
    const report = await reportOf(await drive(clock, processClaimed(h.deps, source, deferred.file.id)));
    expect(report.job_id).toBe(deferred.file.job_id);
    expect(report.rows).toMatchObject({ read: 10, accepted: 10 });
    expectReconciled(report.rows);
    expect(jobsTotal()).toBe(jobs + 1);
    expect(keysWith('ROT')).toHaveLength(10);
  });

  it('an upload failing beyond the retries defers the file; the resumed file uploads and completes', async () => {
    const source = await h.source('transactions', { mode: 'import' });
    const jobs = jobsTotal();
    h.sandbox.control.setFaults({ error_503: 1, paths: ['POST /v1/imports/transactions'] });
    const deferred = await drive(clock, h.push(source, 'upload.csv', transactions('UP', 5)));
    h.sandbox.control.setFaults(null);
    expect(deferred.outcome).toBe('deferred');
    if (deferred.outcome !== 'deferred') return;
    expect(deferred.error.code).toBe('API_SERVER_ERROR');
    expect(await getFile(h.db, deferred.file.id)).toMatchObject({ status: 'uploading', job_id: null });
    expect(jobsTotal()).toBe(jobs);

    const report = await reportOf(await drive(clock, processClaimed(h.deps, source, deferred.file.id)));
    expect(report.rows).toMatchObject({ read: 5, accepted: 5 });
    expectReconciled(report.rows);
    expect(jobsTotal()).toBe(jobs + 1);
  });
});
