/**
 * A POS in another process reads the feed while the agent writes pages: WAL lets both proceed, the reader sees
 * every seq exactly once and in order, and its offsets never go backwards.
 */
import { describe, expect, it } from 'vitest';
import { feedReaderScript, startPosReader } from '../support/pos-reader.ts';
import { STORE_A, approval, deliver, openTempDb } from './support.ts';

const TOTAL_PAGES = 40;
const PAGE_SIZE = 50;
const TOTAL_ROWS = TOTAL_PAGES * PAGE_SIZE;

/** The POS: read-only connection, busy_timeout, `seq > last` pages of 100, until it has TOTAL_ROWS rows. */
const READER = feedReaderScript({
  pageRows: 100,
  total: TOTAL_ROWS,
  deadlineMs: 20_000,
  setup: 'const batches = [];',
  onPage: 'batches.push(rows.length);',
  result: "{ batches, current: db.prepare('SELECT count(*) AS n FROM current_prices').get().n }",
});

describe('a POS reading from another process', () => {
  it('reads the whole feed in order while the agent writes pages', async () => {
    const db = await openTempDb();
    await deliver(db, [approval(1_000_000, { store_id: STORE_A })]); // the reader needs an existing WAL database
    const reader = await startPosReader(READER, db.localFile ?? '');

    for (let page = 0; page < TOTAL_PAGES - 1; page += 1) {
      const ids = Array.from({ length: PAGE_SIZE }, (_, i) => page * PAGE_SIZE + i + 1);
      await deliver(db, ids.map((id) => approval(id, { store_id: STORE_A, item_id: `ITEM-${id % 300}` })));
      await new Promise((resolve) => setTimeout(resolve, 3)); // let the reader in between pages
    }
    const lastIds = Array.from({ length: PAGE_SIZE - 1 }, (_, i) => 2_000_000 + i);
    await deliver(db, lastIds.map((id) => approval(id, { store_id: STORE_A, item_id: 'LAST' })));

    const { code, stderr, read } = await reader.exited;
    expect(code, stderr).toBe(0);
    type Result = { seqs: number[]; batches: number[]; current: number };
    const result = JSON.parse(read) as Result;
    expect(result.seqs).toEqual(Array.from({ length: TOTAL_ROWS }, (_, i) => i + 1));
    expect(result.batches.length).toBeGreaterThan(TOTAL_ROWS / 100); // it read while pages were still arriving
    expect(result.current).toBeGreaterThan(0);
  });
});
