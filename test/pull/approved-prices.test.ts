/**
 * The approved-prices pull against the sandbox over HTTP: every current version in the feed once and acknowledged
 * once, a replayed page after a crash, 409s in the middle of a batch (with and without the conflict list), and
 * ids the platform acknowledged before the agent could record it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { sqlRows } from '../support/state-sql.ts';
import { acknowledgeStored, emptyAckStats } from '../../src/pull/acknowledge.ts';
import { runApprovedPricesPull } from '../../src/pull/approved-prices.ts';
import { StoredPages } from '../../src/pull/stored-pages.ts';
import { storeDeliveredPage } from '../../src/store/approved-prices.ts';
import { recordDeliveryIntent } from '../../src/store/delivery-intents.ts';
import { approval } from '../store/support.ts';
import { pullHarness, currentVersions, sandboxApprovals, type PullHarness } from './support.ts';

let h: PullHarness;
afterEach(() => h.close());

async function feed(db: PullHarness['db']) {
  return await sqlRows<{ seq: number; kind: string; approval_id: number }>(db, 'SELECT seq, kind, approval_id FROM price_feed ORDER BY seq');
}

async function ackStatuses(db: PullHarness['db']): Promise<Record<string, number>> {
  const rows = await sqlRows<{ s: string | null; n: number }>(db, `SELECT CASE WHEN k.status = 'conflict' THEN k.conflict_reason ELSE k.status END AS s, count(*) AS n
       FROM approved_prices a LEFT JOIN approval_acks k ON k.approval_id = a.id GROUP BY 1`);
  return Object.fromEntries(rows.map((r) => [r.s ?? 'null', r.n]));
}

async function expectEveryCurrentVersionFedAndAcknowledgedOnce(): Promise<void> {
  const current = currentVersions(h.sandbox);
  const priceRows = (await feed(h.db)).filter((r) => r.kind === 'price').map((r) => r.approval_id);
  expect(new Set(priceRows).size).toBe(priceRows.length);
  expect(priceRows).toEqual(expect.arrayContaining(current.map((a) => a.id)));
  for (const a of sandboxApprovals(h.sandbox)) expect(a.ackCount, `ack count of ${a.id}`).toBeLessThanOrEqual(1);
  for (const a of current) expect(a.ackCount, `ack count of ${a.id}`).toBe(1);
}

describe('runApprovedPricesPull', () => {
  it('stores every current version once, acknowledges each once, and a second run finds nothing new', async () => {
    h = await pullHarness({ sandbox: { approvals: 1200 } });
    const first = await runApprovedPricesPull(h.deps, undefined, { pageSize: 500 });
    const current = currentVersions(h.sandbox);
    expect(first.deliveries.inserted).toBe(current.length);
    expect(first.acks.acknowledged).toBe(current.length);
    expect(first.acks.requests).toBe(Math.ceil(current.length / 500));
    await expectEveryCurrentVersionFedAndAcknowledgedOnce();
    expect(await feed(h.db)).toHaveLength(current.length);

    const second = await runApprovedPricesPull(h.deps);
    expect(second.deliveries).toMatchObject({ pages: 1, rows: 0 });
    expect(second.acks.requests).toBe(0);
    expect(h.sandbox.control.state().approvals.acks.every((a) => a.conflicting_acks === 0)).toBe(true);
  });

  it('replays a delivery whose page was handed out but never stored, and gets the same page', async () => {
    h = await pullHarness({ sandbox: { approvals: 300 } });
    // A run that died after sending its first request: the intent is committed, the page never stored.
    const intent = await recordDeliveryIntent(h.db, { requestId: crypto.randomUUID(), filters: {}, cursor: null, limit: 100 });
    const lost = await h.client.approvedPrices.deliveries({ request_id: intent.request_id, filters: {}, pagination: { limit: 100 } });
    expect(lost.items).toHaveLength(100);
    const run = await runApprovedPricesPull(h.deps, undefined, { pageSize: 100 });
    expect(run.deliveries.replayed).toBe(1);
    expect(h.sandbox.control.state().deliveries.replays).toBe(1);
    await expectEveryCurrentVersionFedAndAcknowledgedOnce();
  });

  it('after replaying the last page of an interrupted listing, asks for the approvals made since in the same run', async () => {
    h = await pullHarness({ sandbox: { approvals: 30 } });
    const intent = await recordDeliveryIntent(h.db, { requestId: crypto.randomUUID(), filters: {}, cursor: null, limit: 100 });
    const lost = await h.client.approvedPrices.deliveries({ request_id: intent.request_id, filters: {}, pagination: { limit: 100 } });
    expect(lost).toMatchObject({ nextCursor: null });
    const later = h.sandbox.control.injectApprovals({ count: 5 }).length; // approved after the interrupted request
    const run = await runApprovedPricesPull(h.deps, undefined, { pageSize: 100 });
    expect(run.deliveries).toMatchObject({ replayed: 1, inserted: 30 + later });
    expect(h.sandbox.control.state().approvals.pending).toBe(0);
    await expectEveryCurrentVersionFedAndAcknowledgedOnce();
  });

  it('acknowledges an id stored below the last batch once the deliveries have ended, each id once', async () => {
    h = await pullHarness({ sandbox: { approvals: 1200 } });
    // Two pages taken from the platform, stored in the reverse order: the second holds the lower ids.
    const first = await h.client.approvedPrices.deliveries({ request_id: crypto.randomUUID(), filters: {}, pagination: { limit: 500 } });
    const second = await h.client.approvedPrices.deliveries({
      request_id: crypto.randomUUID(),
      filters: {},
      pagination: { limit: 500, cursor: first.nextCursor ?? '' },
    });
    expect([first.items.length, second.items.length]).toEqual([500, 500]);
    const store = async (items: typeof first.items) => {
      const intent = await recordDeliveryIntent(h.db, { requestId: crypto.randomUUID(), filters: {}, cursor: null });
      await storeDeliveredPage(h.db, intent.id, items, null);
      pages.stored();
    };
    const pages = new StoredPages();
    const stats = emptyAckStats();
    const lane = acknowledgeStored({ deps: h.deps, filters: {}, stats, pages });
    await store(second.items);
    await expect.poll(() => stats.acknowledged).toBe(500); // the higher ids, as a full batch
    await store(first.items); // below that batch: not looked for while deliveries go on
    pages.finish();
    await lane;
    expect(stats).toMatchObject({ requests: 2, acknowledged: 1000 });
    const sent = [...first.items, ...second.items].map((a) => a.id);
    for (const a of sandboxApprovals(h.sandbox)) expect(a.ackCount, `ack count of ${a.id}`).toBe(sent.includes(a.id) ? 1 : 0);
  });

  /**
   * A fresh harness whose first run stored `count` approvals but had every acknowledgement refused (403), so all of
   * them stay unacknowledged; the platform's 409s list the conflicting ids when `listed`.
   */
  async function storedUnacknowledged(count: number, listed: boolean): Promise<void> {
    h = await pullHarness({ sandbox: { approvals: 0 } });
    h.sandbox.control.setAckConflictDetail(listed);
    h.sandbox.control.injectApprovals({ count });
    h.sandbox.control.setDenied(['POST /v1/approved_prices/acknowledge']);
    await expect(runApprovedPricesPull(h.deps)).rejects.toThrow(/403/);
    h.sandbox.control.setDenied([]);
  }

  for (const listed of [true, false]) {
    it(`resolves 409s in the middle of a batch ${listed ? 'with' : 'without'} the conflict list, never acknowledging twice`, async () => {
      await storedUnacknowledged(900, listed);
      // Meanwhile on the platform: cancellations, amendments, and ids acknowledged by a run whose answer was lost.
      const cancelled = [17, 250, 251, 600];
      const amended = [18, 499, 777];
      const ackedElsewhere = [3, 4, 5, 501];
      for (const id of cancelled) h.sandbox.control.cancel(id);
      for (const id of amended) h.sandbox.control.amend(id, { approved_price: '1.23' });
      await h.client.approvedPrices.acknowledge(ackedElsewhere);

      const run = await runApprovedPricesPull(h.deps);
      // Found by the history (already acknowledged, cancelled) or by splitting (superseded): no flood of requests.
      expect(run.acks.requests).toBeLessThan(listed ? 12 : 40);
      expect(run.acks.conflicts).toEqual({ cancelled: 4, superseded: 3 });
      expect(run.acks.alreadyAcknowledged).toBe(4);
      expect(run.acks.withdrawals).toBe(4);
      expect(run.deliveries.inserted).toBe(3); // the amendments
      expect(await ackStatuses(h.db)).toEqual({ acknowledged: 900 - 7 + 3, cancelled: 4, superseded: 3 });
      const withdrawals = (await feed(h.db)).filter((r) => r.kind === 'withdrawal').map((r) => r.approval_id);
      expect(withdrawals.sort((a, b) => a - b)).toEqual(cancelled);
      await expectEveryCurrentVersionFedAndAcknowledgedOnce();
      const acks = h.sandbox.control.state().approvals.acks;
      expect(acks.filter((a) => a.conflicting_acks > 0).map((a) => a.id).sort((a, b) => a - b)).toEqual(ackedElsewhere);
    });
  }

  it('finds conflicts the history cannot explain by binary splitting, sending no accepted id twice', async () => {
    await storedUnacknowledged(400, false);
    // Two versions the platform does not know (a restored backup of another account, say): refused as unknown.
    const phantom = [approval(5_000_001, { approved_at: new Date().toISOString() }), approval(5_000_002)];
    const intent = await recordDeliveryIntent(h.db, { requestId: crypto.randomUUID(), filters: {}, cursor: null });
    await storeDeliveredPage(h.db, intent.id, phantom, null);

    const run = await runApprovedPricesPull(h.deps);
    expect(run.acks.acknowledged).toBe(400);
    expect(run.acks.conflicts).toEqual({ unknown: 2 });
    // Each refused singleton costs about two requests per level of the split: 2 * 2 * log2(402) + the first.
    expect(run.acks.requests).toBeLessThanOrEqual(2 * 2 * Math.ceil(Math.log2(402)) + 1);
    expect(await ackStatuses(h.db)).toEqual({ acknowledged: 400, unknown: 2 });
    await expectEveryCurrentVersionFedAndAcknowledgedOnce();
  });
});
