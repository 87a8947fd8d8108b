/**
 * The pull end to end against the sandbox: 5,000 seeded approvals over 20 stores (with seeded amendments and
 * cancellations, future-dated and product-level prices), then the platform changes under the agent: cancellations
 * and amendments before and after acknowledgement, ids acknowledged by a run whose answer was lost, new approvals.
 * The feed, current_prices and the per-store files must match the sandbox's history exactly; every id is
 * acknowledged once; the 409s in the middle of batches are resolved with and without the conflict list. The same
 * run goes through every dialect of the sandbox (docs/sandbox.md): other acknowledge bodies and answers, 409s
 * without ids, nulls left out, other timestamp forms, exactly-once deliveries.
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sqlRows, sqlValue } from '../support/state-sql.ts';
import { exportStoreFiles } from '../../src/outbox/store-files.ts';
import { runApprovedPricesPull, type PullRunSummary } from '../../src/pull/approved-prices.ts';
import { runApprovedPricesReconciliation } from '../../src/pull/reconcile.ts';
import { DIALECTS, type DialectName } from '../../src/sandbox/index.ts';
import { currentPricesAt } from '../../src/store/approved-prices.ts';
import type { FeedRow } from '../../src/store/price-feed.ts';
import { currentVersions, expectedPricesAt, pullHarness, sandboxApprovals, type PullHarness } from '../pull/support.ts';

let h: PullHarness;
afterEach(() => h.close());

const DAY_MS = 86_400_000;
const day = (offsetDays: number) => new Date(Date.now() + offsetDays * DAY_MS).toISOString().slice(0, 10);

/** Every `step`-th element, starting at `from`: ids spread over many acknowledge batches, mid-batch. */
function spread<T>(list: readonly T[], from: number, step: number, count: number): T[] {
  const out: T[] = [];
  for (let i = from; i < list.length && out.length < count; i += step) out.push(list[i] as T);
  return out;
}

async function readStoreFiles(dir: string): Promise<Map<string, string[][]>> {
  const byFolder = new Map<string, string[][]>();
  for (const folder of (await readdir(dir)).sort()) {
    const rows: string[][] = [];
    for (const file of (await readdir(join(dir, folder))).sort()) {
      expect(file).toMatch(/^prices-\d{12}-\d{12}\.csv$/); // no temporary file left behind
      const [header, ...lines] = (await readFile(join(dir, folder, file), 'utf8')).split('\r\n').filter((l) => l !== '');
      expect(header).toBe('seq,kind,approval_id,predecessor_id,item_id,sku,store_id,approved_price,currency_code,effective_date,recorded_at');
      rows.push(...lines.map((l) => l.split(',')));
    }
    byFolder.set(folder, rows);
  }
  return byFolder;
}

/** [dialect, whether 409s list the conflicting ids]: the default both ways, each other dialect as it answers. */
const RUNS: [DialectName, boolean][] = [
  ['default', true],
  ['default', false],
  ['terse', false],
  ['strict', true],
  ['lenient', true],
];

for (const [dialect, listed] of RUNS) {
  describe(`${dialect}: the outbox after a pull of 5,000 approvals (409 ${listed ? 'with' : 'without'} the conflict list)`, { timeout: 120_000 }, () => {
    it('holds exactly the platform history: feed, current prices, store files, one acknowledgement per id', async () => {
      h = await pullHarness({ sandbox: { dialect, approvals: 5000, stores: 20 } });
      const control = h.sandbox.control;
      control.setAckConflictDetail(listed);
      const exports = { dir: join(h.dir, 'outbox'), format: 'csv' as const };
      const delivered = new Set<number>();
      const pull = async (): Promise<PullRunSummary> => {
        for (const a of currentVersions(h.sandbox)) delivered.add(a.id);
        return runApprovedPricesPull(h.deps, undefined, { exports });
      };

      // 1. Stored, but the acknowledgements are refused: everything waits for acknowledgement.
      control.setDenied(['POST /v1/approved_prices/acknowledge']);
      await expect(pull()).rejects.toThrow(/403/);
      control.setDenied([]);
      const firstIds = [...delivered].sort((a, b) => a - b);
      expect(firstIds.length).toBeGreaterThan(4800);

      // 2. Before the agent acknowledges: cancellations, amendments, a lost acknowledgement, new approvals.
      const cancelledEarly = spread(firstIds, 7, 150, 30);
      const amendedEarly = spread(firstIds, 80, 150, 30);
      const ackedElsewhere = spread(firstIds, 41, 230, 20);
      for (const id of cancelledEarly) control.cancel(id);
      for (const id of amendedEarly) control.amend(id);
      await h.client.approvedPrices.acknowledge(ackedElsewhere, { shape: DIALECTS[dialect].ackRequest[0] });
      control.injectApprovals({ count: 200, effective_dates: [day(12), null, day(-2), day(40)], product_level_share: 0.3 });

      const second = await pull();
      expect(second.acks.conflicts).toEqual({ cancelled: 30, superseded: 30 });
      expect(second.acks.alreadyAcknowledged).toBe(20);
      expect(second.acks.withdrawals).toBe(30);
      expect(second.deliveries.inserted).toBe(30 + 200);
      // Without the conflict list too: the refused ids are looked up in the history once every page is stored,
      // not found by splitting batches (68 requests, 130 under load, before the acknowledgements waited for it).
      expect(second.acks.requests).toBeLessThan(40);

      // 3. After acknowledgement: cancellations (only the history reconciliation sees them) and amendments.
      const acked = firstIds.filter((id) => ![...cancelledEarly, ...amendedEarly].includes(id));
      const cancelledLate = spread(acked, 13, 190, 25);
      const amendedLate = spread(acked, 95, 190, 25);
      for (const id of cancelledLate) control.cancel(id);
      for (const id of amendedLate) control.amend(id, { approved_price: '4.99' });
      control.injectApprovals({ count: 100, future_share: 0.5 });
      const third = await pull();
      expect(third.deliveries.inserted).toBe(25 + 100);
      expect(third.acks.conflicts).toEqual({});
      const reconciled = await runApprovedPricesReconciliation(h.deps, undefined, { filters: {}, lookbackDays: 0 });
      expect(reconciled.withdrawals).toBe(25);
      await exportStoreFiles(h.db, exports.dir, { format: 'csv' });

      // The feed: one 'price' row per delivered version, one 'withdrawal' per delivered version now cancelled.
      const versions = new Map(sandboxApprovals(h.sandbox).map((a) => [a.id, a]));
      const feed = await sqlRows<FeedRow>(h.db, 'SELECT * FROM price_feed ORDER BY seq');
      const prices = feed.filter((r) => r.kind === 'price');
      expect(prices.map((r) => r.approval_id).sort((a, b) => a - b)).toEqual([...delivered].sort((a, b) => a - b));
      const cancelledDelivered = [...delivered].filter((id) => versions.get(id)?.cancelled_at !== null);
      expect(feed.filter((r) => r.kind === 'withdrawal').map((r) => r.approval_id).sort((a, b) => a - b)).toEqual(
        cancelledDelivered.sort((a, b) => a - b),
      );
      expect(cancelledDelivered).toHaveLength(30 + 25);
      for (const row of prices) {
        const v = versions.get(row.approval_id);
        expect(row).toMatchObject({
          item_id: v?.item_id,
          sku: v?.sku,
          store_id: v?.store_id,
          approved_price: v?.approved_price,
          currency_code: v?.currency_code,
          effective_date: v?.effective_date,
          predecessor_id: v?.predecessor_id,
        });
      }
      expect(prices.some((r) => r.store_id === null)).toBe(true);
      expect(prices.some((r) => r.predecessor_id !== null)).toBe(true);
      expect(prices.some((r) => (r.effective_date ?? '') > day(1))).toBe(true);

      // current_prices: today, when the future-dated prices arrive, and beyond.
      for (const date of [day(0), day(13), day(45)]) {
        const actual = (await currentPricesAt(h.db, date)).map((p) => ({
          item_id: p.item_id,
          store_key: p.store_key,
          approved_price: p.approved_price,
          effective_date: p.effective_date,
          approval_id: p.approval_id,
        }));
        expect(actual, `prices in force on ${date}`).toEqual(expectedPricesAt(h.sandbox, date));
      }
      const viewToday = await sqlValue<number>(h.db, 'SELECT count(*) FROM current_prices');
      const localToday = new Date(Date.now() - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 10);
      expect(viewToday).toBe((await currentPricesAt(h.db, localToday)).length);

      // Per-store files: each feed row in exactly one file of its store, in seq order.
      const files = await readStoreFiles(exports.dir);
      expect(files.size).toBe(21); // 20 stores and _all
      for (const [folder, rows] of files) {
        const expected = feed.filter((r) => (r.store_id ?? '_all') === folder);
        expect(rows.map((r) => [Number(r[0]), r[1], Number(r[2]), r[7]]), folder).toEqual(
          expected.map((r) => [r.seq, r.kind, r.approval_id, r.approved_price]),
        );
      }

      // Acknowledgements: each delivered version once at most; every current one exactly once; none pending.
      for (const a of sandboxApprovals(h.sandbox)) expect(a.ackCount, `ack count of ${a.id}`).toBeLessThanOrEqual(1);
      for (const a of currentVersions(h.sandbox)) expect(a.ackCount, `ack count of ${a.id}`).toBe(1);
      const local = await sqlRows<{ id: number; ack_status: string | null }>(h.db, 
          'SELECT a.id, k.status AS ack_status FROM approved_prices a LEFT JOIN approval_acks k ON k.approval_id = a.id',
        );
      expect(local.filter((r) => r.ack_status === 'pending')).toEqual([]);
      for (const r of local) {
        if (r.ack_status === 'acknowledged') expect(versions.get(r.id)?.ackCount, `ack of ${r.id}`).toBe(1);
        if (r.ack_status === 'conflict') expect(versions.get(r.id)?.ackCount, `conflict ${r.id}`).toBe(0);
      }
    });
  });
}
