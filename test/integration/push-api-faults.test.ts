/**
 * Bulk mode when the API misbehaves: a rotated key (401) and 5xx beyond the retries defer the file (it stays in
 * processing/, never in failed/) and processClaimed resumes it where it stopped; dropped connections after a write
 * are retried without writing anything twice. Time is a ManualClock driven by the test: the client's backoff waits
 * are recorded, never slept.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { processClaimed, type FileResult } from '../../src/ingest/file/push-file.ts';
import { getFile } from '../../src/store/push-ledger.ts';
import { usePushHarness } from '../support/push-harness.ts';
import { drive } from '../support/manual-clock.ts';
import { expectReconciled, reportOf } from '../fixtures/push/push-report.ts';

const { h, clock } = usePushHarness({ maxInFlight: 4 });

function transactions(prefix: string, rows: number): string {
  const lines = ['transaction_id,item_id,transaction_timestamp,quantity'];
  for (let i = 0; i < rows; i += 1) lines.push(`${prefix}-${i},ITEM-${i % 7},2026-11-20T08:00:00Z,${1 + (i % 3)}`);
  return `${lines.join('\n')}\n`;
}

function keysWith(prefix: string): string[] {
  return (h.sandbox.control.state({ keys: true }).transactions.keys ?? []).filter((k) => k.startsWith(`${prefix}-`));
}

function expectDeferred(result: FileResult, code: string): Extract<FileResult, { outcome: 'deferred' }> {
  expect(result.outcome).toBe('deferred');
  if (result.outcome !== 'deferred') throw new Error('unreachable');
  expect(result.error.code).toBe(code);
  expect(existsSync(result.file.processing_path)).toBe(true);
  expect(result.file.final_path).toBeNull();
  return result;
}

describe('push when the API fails', () => {
  it('a rotated key (401) stops sending and defers the file; with the new key processClaimed resumes it', async () => {
    const source = await h.source('transactions', { batch_size: 2 });
    const rejectedBefore = h.sandbox.control.state().auth.rejected_total;
    const oldKey = h.sandbox.apiKey;
    const newKey = h.sandbox.control.rotateKey();
    expect(newKey).not.toBe(oldKey);
    const deferred = expectDeferred(await drive(clock, h.push(source, 'tx.csv', transactions('K401', 20))), 'API_KEY_REJECTED');
    expect(deferred.file.status).toBe('claimed');
    // Sending stopped at the first refusal: no more than the batches already in flight were tried with the old key.
    expect(h.sandbox.control.state().auth.rejected_total - rejectedBefore).toBeLessThanOrEqual(4);
    expect(keysWith('K401')).toEqual([]);

    h.client.transport.setApiKey(newKey);
    const report = await reportOf(await drive(clock, processClaimed(h.deps, source, deferred.file.id)));
    expect(report.rows).toMatchObject({ read: 20, sent: 20, accepted: 20, rejected: 0 });
    expectReconciled(report.rows);
    expect(keysWith('K401').sort()).toEqual(Array.from({ length: 20 }, (_, i) => `K401-${i}`).sort());
    expect((await getFile(h.db, deferred.file.id))?.attempts).toBe(2);
  });

  it('5xx beyond the retries defers the file (not failed); once the API is back, the resumed file skips committed batches', async () => {
    const source = await h.source('transactions', { batch_size: 5 });
    const sleepsBefore = clock.sleeps.length;
    // Every bulk request gets 503 until the faults are turned off.
    h.sandbox.control.setFaults({ error_503: 1, paths: ['POST /v1/transactions/bulk'] });
    const deferred = expectDeferred(await drive(clock, h.push(source, 'tx5xx.csv', transactions('F503', 40))), 'API_SERVER_ERROR');
    const backoff = clock.sleeps.slice(sleepsBefore).filter((ms) => ms >= 1000 && ms <= 30_000);
    expect(backoff.length).toBeGreaterThanOrEqual(4); // 1 s, 2 s, 4 s, 8 s (+ jitter) per batch
    expect(backoff.every((ms) => ms <= 30_000)).toBe(true);
    expect(h.sandbox.control.state().faults.injected.error_503).toBeGreaterThanOrEqual(5);

    h.sandbox.control.setFaults(null);
    const report = await reportOf(await drive(clock, processClaimed(h.deps, source, deferred.file.id)));
    expect(report.rows).toMatchObject({ read: 40, sent: 40, accepted: 40 });
    expectReconciled(report.rows);
    expect(keysWith('F503')).toHaveLength(40);
  });

  it('retries 5xx and dropped connections within the policy: every row written once, competitor prices never twice', async () => {
    const source = await h.source('competitor_prices', { batch_size: 10 });
    const before = h.sandbox.control.state().competitor_prices.count;
    const lines = ['competitor_name,item_id,observed_at,regular_price,effective_price'];
    for (let i = 0; i < 200; i += 1) lines.push(`Rival-${i % 3},CP-${i},2026-11-20T08:00:00Z,1.${String(i % 100).padStart(2, '0')},1.00`);
    h.sandbox.control.setFaults({ error_502: 0.15, drop_after_commit: 0.15, drop_before_commit: 0.1, paths: ['POST /v1/competitor_prices/bulk'] });
    try {
      // A batch can still meet five faults in a row (the retry policy's limit): the file is then deferred, and tried
      // again as the daemon would; exactly-once must hold across those attempts too.
      let result = await drive(clock, h.push(source, 'cp.csv', `${lines.join('\n')}\n`));
      for (let attempt = 0; result.outcome === 'deferred' && attempt < 10; attempt += 1) {
        result = await drive(clock, processClaimed(h.deps, source, result.file.id));
      }
      const report = await reportOf(result);
      expect(report.rows).toMatchObject({ read: 200, sent: 200, accepted: 200 });
      expectReconciled(report.rows);
    } finally {
      h.sandbox.control.setFaults(null);
    }
    const state = h.sandbox.control.state();
    expect(state.faults.injected.drop_after_commit).toBeGreaterThan(0);
    expect(state.competitor_prices.count).toBe(before + 200);
    expect(state.competitor_prices.single_creates).toBe(0);
  });
});
