/**
 * A POS in another process reads the feed while the agent writes pages: WAL lets both proceed, the reader sees
 * every seq exactly once and in order, and its offsets never go backwards.
 */
import { describe, expect, it } from 'vitest';
import { startPosReader } from '../support/pos-reader.ts';
import { STORE_A, approval, deliver, openTempDb } from './support.ts';

const TOTAL_PAGES = 40;
const PAGE_SIZE = 50;
const TOTAL_ROWS = TOTAL_PAGES * PAGE_SIZE;

/** The POS: read-only connection, busy_timeout, `seq > last` pages of 100, until it has TOTAL_ROWS rows. */
const READER = `
const Database = require(process.env.BETTER_SQLITE3);
const db = new Database(process.env.DB_PATH, { readonly: true });
db.pragma('busy_timeout = 5000');
const page = db.prepare('SELECT seq, approval_id FROM price_feed WHERE seq > ? ORDER BY seq LIMIT 100');
let last = 0;
const seqs = [];
const batches = [];
const deadline = Date.now() + 20000;
function poll() {
  const rows = page.all(last);
  if (rows.length > 0) {
    batches.push(rows.length);
    for (const row of rows) seqs.push(row.seq);
    last = rows[rows.length - 1].seq;
  }
  if (seqs.length >= ${TOTAL_ROWS} || Date.now() > deadline) {
    const current = db.prepare('SELECT count(*) AS n FROM current_prices').get().n;
    process.stdout.write(JSON.stringify({ seqs, batches, current }));
    db.close();
    return;
  }
  setTimeout(poll, 2);
}
process.stdout.write('ready\\n');
poll();
`;

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
