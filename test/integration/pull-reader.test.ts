/**
 * A POS in another process reads the outbox DURING a real pull from the sandbox: WAL lets both proceed, the reader
 * sees every seq once and in order, sees only whole pages, and the pull is never blocked by it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runApprovedPricesPull } from '../../src/pull/approved-prices.ts';
import { currentVersions, pullHarness, type PullHarness } from '../pull/support.ts';
import { startPosReader } from '../support/pos-reader.ts';

let h: PullHarness;
afterEach(() => h.close());

const PAGE_SIZE = 100;

/** The POS: read-only, busy_timeout, `seq > last` pages of 250, polling until it has `total` rows. */
const READER = `
const Database = require(process.env.BETTER_SQLITE3);
const db = new Database(process.env.DB_PATH, { readonly: true });
db.pragma('busy_timeout = 5000');
const total = Number(process.env.TOTAL);
const page = db.prepare('SELECT seq, approval_id FROM price_feed WHERE seq > ? ORDER BY seq LIMIT 250');
const counts = db.prepare('SELECT (SELECT count(*) FROM approved_prices) AS stored, (SELECT count(*) FROM price_feed) AS fed');
let last = 0;
const seqs = [];
const snapshots = [];
let firstRowsAt = null;
const deadline = Date.now() + 50000;
function poll() {
  const rows = page.all(last);
  if (rows.length > 0) {
    firstRowsAt ??= Date.now();
    for (const row of rows) seqs.push(row.seq);
    last = rows[rows.length - 1].seq;
    snapshots.push(counts.get());
  }
  if (seqs.length >= total || Date.now() > deadline) {
    process.stdout.write(JSON.stringify({ seqs, snapshots, firstRowsAt }));
    db.close();
    return;
  }
  setTimeout(poll, 2);
}
process.stdout.write('ready\\n');
poll();
`;

describe('a POS reading the outbox from another process during a pull', () => {
  it('reads every feed row once, in order, while the pages are being committed', { timeout: 90_000 }, async () => {
    h = await pullHarness({ sandbox: { approvals: 6000 } });
    const total = currentVersions(h.sandbox).length;
    const reader = await startPosReader(READER, h.db.localFile ?? '', { TOTAL: String(total) });

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
