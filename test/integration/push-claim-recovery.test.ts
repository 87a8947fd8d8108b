/**
 * A claim cut short by a crash (the ledger row written, the file not yet renamed into processing/) is completed or
 * closed by processClaimed, never left stuck. Regression: when the file had vanished meanwhile, closing the row
 * tried to move the missing file to failed/ and threw on every resume, so the source's unfinished work (and every
 * `push --source` of it) failed for good.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { processClaimed, type PushSource } from '../../src/ingest/file/push-file.ts';
import { getFile, unfinishedFiles } from '../../src/store/push-ledger.ts';
import { crashedClaim } from '../support/crashed-claim.ts';
import { pushHarness } from '../support/push-harness.ts';
import { openForFile } from '../support/open-for-file.ts';
import { reportOf } from '../fixtures/push/push-report.ts';

const h = openForFile(() => pushHarness());

/** The ledger as a crash right after beginClaim and setProcessingPath leaves it. */
const interruptedClaim = (source: PushSource, name: string) => crashedClaim(h.db, source, name, true);

describe('a claim cut short by a crash', () => {
  it('is completed when the file is still in the inbox: renamed, hashed and pushed', async () => {
    const source = await h.source('transactions');
    await writeFile(join(source.inbox, 'late.csv'), 'transaction_id,item_id,transaction_timestamp\nCLM-1,A,2026-11-20T08:00:00Z\n');
    const id = await interruptedClaim(source, 'late.csv');
    const report = await reportOf(await processClaimed(h.deps, source, id));
    expect(report.rows).toMatchObject({ read: 1, accepted: 1 });
    expect(report.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(h.sandbox.control.state({ keys: true }).transactions.keys).toContain('CLM-1');
  });

  it('is closed as failed (FILE_VANISHED, with a report) when the file is gone, and stays closed', async () => {
    const source = await h.source('transactions');
    const id = await interruptedClaim(source, 'gone.csv');
    const result = await processClaimed(h.deps, source, id);
    expect(result.outcome).toBe('failed');
    if (result.outcome !== 'failed') return;
    const report = JSON.parse(await readFile(result.reportPath, 'utf8')) as { error: { code: string } };
    expect(report.error.code).toBe('FILE_VANISHED');
    expect(existsSync(join(source.inbox, 'failed', 'gone.csv'))).toBe(false);
    expect((await getFile(h.db, id))?.status).toBe('failed');
    expect(await unfinishedFiles(h.db, source.name)).toEqual([]);
    // Resuming it again (a second start-up) changes nothing and does not throw.
    expect((await processClaimed(h.deps, source, id)).outcome).toBe('failed');
  });
});
