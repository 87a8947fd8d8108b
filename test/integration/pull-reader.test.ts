/**
 * A POS in another process reads the outbox DURING a real pull from the sandbox: WAL lets both proceed, the reader
 * sees every seq once and in order, sees only whole pages, and the pull is never blocked by it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runApprovedPricesPull } from '../../src/pull/approved-prices.ts';
import { currentVersions, pullHarness, type PullHarness } from '../pull/support.ts';
import { feedReaderScript, startPosReader } from '../support/pos-reader.ts';

let h: PullHarness;
afterEach(() => h.close());

const PAGE_SIZE = 100;

/** The POS: read-only, busy_timeout, `seq > last` pages of 250, polling until it has every row of the pull. */
const reading = {
  pageRows: 250,
  deadlineMs: 50_000,
  setup: `
const counts = db.prepare('SELECT (SELECT count(*) FROM approved_prices) AS stored, (SELECT count(*) FROM price_feed) AS fed');
const snapshots = [];
let firstRowsAt = null;`,
  onPage: 'firstRowsAt ??= Date.now(); snapshots.push(counts.get());',
  result: '{ snapshots, firstRowsAt }',
};

describe('a POS reading the outbox from another process during a pull', () => {
  it('reads every feed row once, in order, while the pages are being committed', { timeout: 90_000 }, async () => {
    h = await pullHarness({ sandbox: { approvals: 6000 } });
    const total = currentVersions(h.sandbox).length;
    const reader = await startPosReader(feedReaderScript({ ...reading, total }), h.db.localFile ?? '');

    const summary = await runApprovedPricesPull(h.deps, undefined, { pageSize: PAGE_SIZE });
    const pullDoneAt = Date.now();
    expect(summary.deliveries.inserted).toBe(total);

    const { code, stderr, read } = await reader.exited;
    expect(code, stderr).toBe(0);
    type Result = { seqs: number[]; snapshots: { stored: number; fed: number }[]; firstRowsAt: number };
    const result = JSON.parse(read) as Result;
    expect(result.seqs).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    // It read while the pull was still committing pages...
    expect(result.firstRowsAt).toBeLessThan(pullDoneAt);
    expect(result.snapshots.filter((s) => s.fed < total).length).toBeGreaterThan(3);
    // ...and only ever saw whole pages: every stored version with its feed row, in multiples of the page size.
    for (const s of result.snapshots) {
      expect(s.fed).toBe(s.stored);
      if (s.fed < total) expect(s.fed % PAGE_SIZE).toBe(0);
    }
  });
});
