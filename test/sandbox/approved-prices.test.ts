import { describe, expect, it } from 'vitest';
import { ApprovedPricePage, type ApprovedPrice } from '../../src/api/schemas/index.ts';
import { cursorParam, everyPage, expectRefusedQueries, sandboxForFile } from './support.ts';

const h = sandboxForFile({ approvals: 100 });

async function page(query: string): Promise<{ items: ApprovedPrice[]; next_cursor: string | null }> {
  const res = await h.client.get(`/v1/approved_prices${query}`);
  expect(res.status).toBe(200);
  return ApprovedPricePage.parse(res.body);
}

async function history(query = ''): Promise<ApprovedPrice[]> {
  return (await everyPage((cursor) => page(`?history=true&limit=500${query}${cursorParam(cursor)}`))).flatMap((p) => p.items);
}

describe('seeded approvals', () => {
  it('spread across stores and grids, some product-level, with amendments and cancellations', async () => {
    const all = await history();
    const state = h.sandbox.control.state().approvals;
    expect(all).toHaveLength(state.total);
    expect(state).toMatchObject({ total: 105, superseded: 5, cancelled: 3 });
    expect(new Set(all.map((a) => a.grid_id)).size).toBeGreaterThan(1);
    expect(new Set(all.map((a) => a.store_id)).size).toBeGreaterThan(5);
    expect(all.some((a) => a.store_id === null)).toBe(true);
    const amended = all.filter((a) => a.predecessor_id != null);
    expect(amended).toHaveLength(5);
    expect(amended.every((a) => typeof a.amendment_reason === 'string')).toBe(true);
    expect(all.filter((a) => a.cancelled_at != null)).toHaveLength(3);
    expect(all.some((a) => a.effective_date != null && a.effective_date > new Date(h.clock.now()).toISOString().slice(0, 10))).toBe(true);
    expect(all.map((a) => a.id)).toEqual([...all.map((a) => a.id)].sort((x, y) => y - x)); // newest first
  });
});

describe('GET /v1/approved_prices', () => {
  it('history=false returns pending rows newest first and moves them to exported_api', async () => {
    const pendingBefore = h.sandbox.control.state().approvals.pending;
    const first = await page('?limit=10');
    expect(first.items).toHaveLength(10);
    expect(first.items.every((a) => a.export_status === 'pending' && a.cancelled_at == null)).toBe(true);
    expect(first.items.map((a) => a.id)).toEqual([...first.items.map((a) => a.id)].sort((x, y) => y - x));
    const again = await page('?limit=10');
    expect(again.items.map((a) => a.id).some((id) => first.items.some((a) => a.id === id))).toBe(false);
    const state = h.sandbox.control.state().approvals;
    expect(state.pending).toBe(pendingBefore - 20);
    expect(state.exported_api).toBe(20);
    const after = await history();
    const exported = after.find((a) => a.id === first.items[0]!.id)!;
    expect(exported.export_status).toBe('exported_api');
    expect(exported.exported_at).toBe(new Date(h.clock.now()).toISOString());
  });

  it('never shows cancelled or superseded versions without history', async () => {
    const all = await history();
    const hidden = new Set(all.filter((a) => a.cancelled_at != null).map((a) => a.id));
    for (const a of all) if (a.predecessor_id != null) hidden.add(a.predecessor_id);
    const seen = (await everyPage((cursor) => page(`?limit=7${cursorParam(cursor)}`))).flatMap((p) => p.items);
    expect(seen.some((a) => hidden.has(a.id))).toBe(false);
    expect((await page('')).items).toEqual([]); // everything pending has been read
  });

  it('history=true is read-only', async () => {
    const before = h.sandbox.control.state().approvals;
    await history();
    expect(h.sandbox.control.state().approvals).toEqual(before);
  });

  it('applies every filter of the spec', async () => {
    const all = await history();
    const sample = all.find((a) => a.store_id !== null && a.effective_date !== null && a.sku !== null)!;
    const check = async (query: string, predicate: (a: ApprovedPrice) => boolean) => {
      const got = await history(query);
      expect(got.map((a) => a.id), query).toEqual(all.filter(predicate).map((a) => a.id));
      expect(got.length, query).toBeGreaterThan(0);
    };
    await check(`&store_id=${sample.store_id!}`, (a) => a.store_id === sample.store_id);
    await check(`&grid_id=${sample.grid_id}`, (a) => a.grid_id === sample.grid_id);
    await check(`&item_id=${sample.item_id!}`, (a) => a.item_id === sample.item_id);
    await check(`&sku=${sample.sku!}`, (a) => a.sku === sample.sku);
    await check(`&approved_after=${sample.approved_at}`, (a) => a.approved_at >= sample.approved_at);
    await check(`&approved_before=${sample.approved_at}`, (a) => a.approved_at <= sample.approved_at);
    await check(`&effective_after=${sample.effective_date!}`, (a) => a.effective_date != null && a.effective_date >= sample.effective_date!);
    await check(`&effective_before=${sample.effective_date!}`, (a) => a.effective_date != null && a.effective_date <= sample.effective_date!);
  });

  it('refuses bad queries with 422 on the parameter', async () => {
    await expectRefusedQueries(h, '/v1/approved_prices', {
      'limit=501': 'limit', 'limit=0': 'limit', 'history=maybe': 'history', 'store_id=123': 'store_id',
      'approved_after=2026-11-01': 'approved_after', 'effective_after=2026-11-01T00:00:00Z': 'effective_after',
    });
  });
});
