/**
 * Regression (issue 11, failure 6): a product_store import job failed on 2 rows with unknown stores out of 9,989;
 * the report had `job_id: null` and `rows.read: null` and named neither failing row. Now the rows a job names are
 * rejects at their line in the user's file (not the canonical file's), with the server's reason, whatever shape the
 * detail had. A failed job that named every row it refused is replaced by a new job without them (the document: "fix
 * the CSV and submit a new job"), so the file is done with those two rows in its rejects. A job that names no row
 * fails the file: its report has the job id and the rows read, every row sent is in the rejects as not written, and
 * the error says the server named none. One file per dialect: strict (`failed_rows` by data row), lenient (a count
 * and a sample, statuses named otherwise), terse (no detail at all), and default (the job completes; the refused
 * rows are its errors).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { processClaimed, pushFile, type PushSource } from '../../src/ingest/file/push-file.ts';
import type { DialectName } from '../../src/sandbox/index.ts';
import { ManualClock, drive } from '../support/manual-clock.ts';
import { pushHarness, type PushHarness } from '../support/push-harness.ts';
import { expectReconciled, rejectLines, reportOf } from '../fixtures/push/push-report.ts';

async function drop(source: PushSource, name: string, content: string): Promise<string> {
  const path = join(source.inbox, name);
  await writeFile(path, content);
  return path;
}

const UNKNOWN_STORE = '00000000-0000-4000-8000-00000000dead';

/** 8 rows; line 3 is rejected before sending (no price), lines 6 and 10 name a store the platform does not have. */
function prices(p: string, [s1, s2]: readonly string[]): string {
  return [
    'item_id,store_id,current_price',
    `${p}-1,${s1},1.00`,
    `${p}-2,${s1},`,
    `${p}-3,${s2},3.00`,
    `${p}-4,${s1},4.00`,
    `${p}-5,${UNKNOWN_STORE},5.00`,
    '',
    `${p}-6,${s2},6.00`,
    `${p}-7,${s2},7.00`,
    `${p}-8,${UNKNOWN_STORE},8.00`,
    '',
  ].join('\n');
}

describe.each(['strict', 'lenient', 'terse', 'default'] as const satisfies readonly DialectName[])('a product_store import with two unknown stores, %s dialect', (dialect) => {
  let h: PushHarness;
  let clock: ManualClock;
  beforeAll(async () => {
    clock = new ManualClock();
    h = await pushHarness({ clock, sandbox: { clock, dialect, jobPace: { queuedMs: 20_000, tickMs: 1_000, rowsPerTick: 5 } } });
  });
  afterAll(() => h.close());

  it('names the refused rows by their line in the user file, sends the rest, and reports the job and the rows read', async () => {
    const source = await h.source('product_store', { mode: 'import' });
    const stores = h.sandbox.control.stores;
    const jobs = h.sandbox.control.state().jobs['count'] ?? 0;
    const result = await drive(clock, h.push(source, 'prices.csv', prices('JF', stores)));
    const rejects = (await rejectLines(result.outcome === 'done' || result.outcome === 'failed' ? result.rejectsPath : null)).slice(1);
    const refused = rejects.filter((l) => l.startsWith('6,') || l.startsWith('10,'));
    if (dialect !== 'terse') {
      const report = await reportOf(result);
      expect(report.job_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(report.rows).toMatchObject({ read: 8, sent: 7, accepted: 5, rejected_locally: 1, rejected_by_api: 2 });
      expectReconciled(report.rows);
      expect(rejects.map((l) => l.split(',')[0])).toEqual(['3', '6', '10']);
      expect(refused.join('\n')).toMatch(/store/i);
      const written = [...h.sandbox.control.world.productStore.table.rows()].filter((r) => r.item_id.startsWith('JF-')).map((r) => r.item_id);
      expect(written.sort()).toEqual(['JF-1', 'JF-3', 'JF-4', 'JF-6', 'JF-7']);
      // strict and lenient fail the whole job: a second job without the two rows; default writes the rest at once.
      expect((h.sandbox.control.state().jobs['count'] ?? 0) - jobs).toBe(dialect === 'default' ? 1 : 2);
      if (dialect !== 'default') expect(refused.join('\n')).toMatch(/refused by import job [0-9a-f-]{36}; the other rows went as a new job/);
      return;
    }
    const report = await reportOf(result, 'failed');
    expect(report.job_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(report.rows).toMatchObject({ read: 8, sent: 7, accepted: 0, rejected_locally: 1, rejected_by_api: 7 });
    expectReconciled(report.rows);
    expect(report.error?.code).toBe('IMPORT_JOB_FAILED');
    expect(report.error?.message).toMatch(/the server gave no detail of which rows it refused; none of the 7 rows sent is counted as written/);
    // Every row that was not written is in the rejects, once.
    expect(rejects.map((l) => l.split(',')[0])).toEqual(['2', '3', '4', '5', '6', '8', '9', '10']);
    expect(rejects.filter((l) => l.includes('not_written'))).toHaveLength(7);
    expect((h.sandbox.control.state().jobs['count'] ?? 0) - jobs).toBe(1);
  });
  // The new job's upload fails beyond the retries (the agent stops there, as after a crash): the file is deferred
  // with the two rows already rejects and no job id, and the resumed file uploads the rest once, without them.
  it.runIf(dialect === 'strict')('a new job whose upload failed is uploaded again without the refused rows', async () => {
    const source = await h.source('product_store', { mode: 'import' });
    const jobs = h.sandbox.control.state().jobs['count'] ?? 0;
    let uploads = 0;
    const onResponse = (e: { operation: string; status: number }) => {
      if (e.operation !== 'productStore.import' || e.status !== 202) return;
      uploads += 1;
      if (uploads === 1) h.sandbox.control.setFaults({ error_503: 1, paths: ['POST /v1/imports/product_store'] });
    };
    const dispatcher = new Agent({ allowH2: false, connections: 2 });
    const client = new ApiClient({ baseUrl: h.sandbox.url, apiKey: h.sandbox.apiKey, dispatcher, clock, hooks: { onResponse } });
    try {
      const deferred = await drive(clock, pushFile({ ...h.deps, client }, source, await drop(source, 'again.csv', prices('JA', h.sandbox.control.stores))));
      expect(deferred.outcome).toBe('deferred');
      if (deferred.outcome !== 'deferred') return;
      expect(deferred.file).toMatchObject({ status: 'uploading', job_id: null });
      h.sandbox.control.setFaults(null);
      const report = await reportOf(await drive(clock, processClaimed({ ...h.deps, client }, source, deferred.file.id)));
      expect(report.rows).toMatchObject({ read: 8, sent: 7, accepted: 5, rejected_locally: 1, rejected_by_api: 2 });
      expectReconciled(report.rows);
      const rejects = (await rejectLines(report.rejectsPath)).slice(1);
      expect(rejects.map((l) => l.split(',')[0])).toEqual(['3', '6', '10']);
      expect((h.sandbox.control.state().jobs['count'] ?? 0) - jobs).toBe(2);
      const written = [...h.sandbox.control.world.productStore.table.rows()].filter((r) => r.item_id.startsWith('JA-')).map((r) => r.item_id);
      expect(written.sort()).toEqual(['JA-1', 'JA-3', 'JA-4', 'JA-6', 'JA-7']);
    } finally {
      await dispatcher.close();
    }
  });
});
