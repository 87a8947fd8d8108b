/**
 * Approved prices through the client: the list (history=false is a destructive read that moves the returned rows to
 * exported_api; history=true is read-only and includes exported, amended and cancelled versions), replayable
 * deliveries (the same request_id returns the identical page), and acknowledge (200; 409 listing the conflicting
 * ids; more than 500 ids refused locally). The seeded book has 40 approvals with amendments and a cancellation.
 */
import { describe, expect, it } from 'vitest';
import { API_ERROR_CODES } from '../../src/api/errors.ts';
import { ackConflictsOf } from '../../src/api/resources/approved-prices.ts';
import type { ApprovedPrice } from '../../src/api/schemas/index.ts';
import { allPages, contractForFile, errorOf, firstPage, ownedOperationsTest } from './support.ts';

const h = contractForFile('approved-prices', { approvals: 40 });

const counts = () => h.sandbox.control.state({ keys: false }).approvals;
const historyRows = async (q: Record<string, string> = {}): Promise<ApprovedPrice[]> =>
  (await allPages(h.client.approvedPrices.list({ ...q, history: true, limit: 500 }))).flatMap((p) => p.items);
const uuid = (n: number): string => `5a0e7c1e-0000-4000-8000-${String(n).padStart(12, '0')}`;

describe('approvedPrices.list', () => {
  it('history=true is read-only and holds every version: amended (predecessor_id) and cancelled ones', async () => {
    const before = counts();
    const first = await historyRows();
    expect(h.lastStatus('approvedPrices.list')).toBe(200);
    expect(await historyRows()).toEqual(first);
    expect(counts()).toEqual(before);
    expect(first).toHaveLength(before.total);
    expect(first.some((a) => a.cancelled_at !== null && a.cancelled_at !== undefined)).toBe(true);
    expect(first.some((a) => typeof a.predecessor_id === 'number')).toBe(true);
    expect(first.map((a) => a.id)).toEqual([...first.map((a) => a.id)].sort((a, b) => b - a));
  });

  it('history=false returns pending rows newest first and moves them to exported_api', async () => {
    const page = await firstPage(h.client.approvedPrices.list({ limit: 5 }));
    expect(h.lastStatus('approvedPrices.list')).toBe(200);
    expect(page.items).toHaveLength(5);
    expect(page.nextCursor).not.toBeNull();
    const times = page.items.map((a) => Date.parse(a.approved_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    for (const a of page.items) expect(a).toMatchObject({ export_status: 'pending', cancelled_at: null });
    const ids = new Set(page.items.map((a) => a.id));
    const after = (await historyRows()).filter((a) => ids.has(a.id));
    expect(after).toHaveLength(5);
    for (const a of after) expect(a).toMatchObject({ export_status: 'exported_api', exported_at: expect.any(String) as unknown });
    // They are omitted from later destructive reads.
    const next = await firstPage(h.client.approvedPrices.list({ limit: 5 }));
    expect(next.items.filter((a) => ids.has(a.id))).toEqual([]);
  });

  it('applies the filters (store_id, grid_id, item_id, effective and approved ranges)', async () => {
    const all = await historyRows();
    const sample = all.find((a) => a.store_id !== null && a.effective_date !== null && a.item_id !== null);
    if (!sample?.store_id || !sample.effective_date || !sample.item_id) throw new Error('no sample approval');
    expect((await historyRows({ store_id: sample.store_id })).every((a) => a.store_id === sample.store_id)).toBe(true);
    expect((await historyRows({ grid_id: sample.grid_id ?? '' })).every((a) => a.grid_id === sample.grid_id)).toBe(true);
    expect((await historyRows({ item_id: sample.item_id })).map((a) => a.item_id)).toContain(sample.item_id);
    const effective = await historyRows({ effective_after: sample.effective_date });
    expect(effective.every((a) => a.effective_date != null && a.effective_date >= sample.effective_date!)).toBe(true);
    const approved = await historyRows({ approved_before: sample.approved_at });
    expect(approved.map((a) => a.id)).toEqual(all.filter((a) => Date.parse(a.approved_at) <= Date.parse(sample.approved_at)).map((a) => a.id));
  });

  it('refuses limit 501 locally and answers 422 for an invalid filter value', async () => {
    await expect(errorOf(() => h.client.approvedPrices.list({ limit: 501 }))).resolves.toMatchObject({ code: API_ERROR_CODES.localValidation });
    const error = await errorOf(() => firstPage(h.client.approvedPrices.list({ history: true, cursor: 'bogus' })));
    expect(error).toMatchObject({ code: API_ERROR_CODES.validation, status: 422 });
    expect(error.detail?.[0]).toMatchObject({ loc: ['query', 'cursor'], type: 'value_error' });
  });
});

describe('approvedPrices.deliveries', () => {
  it('returns a page with delivery fields; the same request_id replays the identical page', async () => {
    const request = { request_id: uuid(1), pagination: { limit: 10 } };
    const page = await h.client.approvedPrices.deliveries(request);
    expect(h.lastStatus('approvedPrices.deliveries')).toBe(200);
    expect(page.items).toHaveLength(10);
    expect(page.nextCursor).not.toBeNull();
    for (const a of page.items) {
      expect(a).toMatchObject({ delivery_channel: 'client_api' });
      expect(a).toHaveProperty('predecessor_id');
      expect(a).toHaveProperty('amendment_reason');
    }
    // State moves on (the rows are now exported and some acknowledged) but the replay is the same page.
    await h.client.approvedPrices.acknowledge(page.items.slice(0, 3).map((a) => a.id));
    const replay = await h.client.approvedPrices.deliveries(request);
    expect({ items: replay.items, nextCursor: replay.nextCursor }).toEqual({ items: page.items, nextCursor: page.nextCursor });
    expect(h.sandbox.control.state({ keys: false }).deliveries).toEqual({ requests: 2, replays: 1 });

    // A new request_id with the cursor continues after the page, in ascending id order.
    const next = await h.client.approvedPrices.deliveries({ request_id: uuid(2), pagination: { limit: 10, cursor: page.nextCursor ?? '' } });
    const lastId = page.items.at(-1)?.id ?? 0;
    expect(next.items.every((a) => a.id > lastId)).toBe(true);
  });

  it('applies filters in the body; an invalid request_id is refused locally', async () => {
    const { store_id: storeId } = (await historyRows()).find((a) => a.store_id !== null) ?? {};
    if (!storeId) throw new Error('no store-level approval');
    const page = await h.client.approvedPrices.deliveries({ request_id: uuid(3), filters: { store_id: storeId, history: true } });
    expect(page.items.length).toBeGreaterThan(0);
    expect(page.items.every((a) => a.store_id === storeId)).toBe(true);
    const error = await errorOf(() => h.client.approvedPrices.deliveries({ request_id: 'r-1' }));
    expect(error.code).toBe(API_ERROR_CODES.localValidation);
  });
});

describe('approvedPrices.acknowledge', () => {
  it('acknowledges a batch with 200 and lists the ids', async () => {
    const page = await h.client.approvedPrices.deliveries({ request_id: uuid(10), pagination: { limit: 4 } });
    const ids = page.items.map((a) => a.id);
    await expect(h.client.approvedPrices.acknowledge(ids)).resolves.toEqual({ status: 200, body: { acknowledged: ids } });
    expect(h.lastStatus('approvedPrices.acknowledge')).toBe(200);
    const acked = (await historyRows()).filter((a) => ids.includes(a.id));
    expect(acked.every((a) => a.export_status !== 'pending' && a.export_status !== 'exported_api')).toBe(true);
  });

  it('answers 409 with the conflicting ids (ackConflictsOf); nothing in the batch is acknowledged', async () => {
    const delivered = await h.client.approvedPrices.deliveries({ request_id: uuid(11), pagination: { limit: 2 } });
    const [fresh, toCancel] = delivered.items.map((a) => a.id);
    if (fresh === undefined || toCancel === undefined) throw new Error('expected two deliverable approvals');
    const alreadyAcked = h.sandbox.control.state({ keys: false }).approvals.acks[0]?.id ?? 0;
    h.sandbox.control.cancel(toCancel);
    const error = await errorOf(() => h.client.approvedPrices.acknowledge([fresh, toCancel, alreadyAcked]));
    expect(error).toMatchObject({ code: API_ERROR_CODES.conflict, status: 409, operation: 'approvedPrices.acknowledge' });
    expect(h.lastStatus('approvedPrices.acknowledge')).toBe(409);
    expect(ackConflictsOf(error)).toEqual([
      { id: toCancel, reason: 'cancelled' },
      { id: alreadyAcked, reason: 'already_acknowledged' },
    ]);
    expect(h.sandbox.control.state({ keys: false }).approvals.acks.find((a) => a.id === fresh)).toBeUndefined();
  });

  it('refuses more than 500 ids locally; the sandbox would answer 422 too_long', async () => {
    const ids = Array.from({ length: 501 }, (_, i) => i + 1);
    const before = h.responseCount();
    const error = await errorOf(() => h.client.approvedPrices.acknowledge(ids));
    expect(error).toMatchObject({ code: API_ERROR_CODES.localValidation, operation: 'approvedPrices.acknowledge' });
    expect(h.responseCount()).toBe(before);
    const raw = await h.raw('POST', '/v1/approved_prices/acknowledge', JSON.stringify({ approval_ids: ids }));
    expect(raw).toEqual({ status: 422, body: { detail: [expect.objectContaining({ loc: ['body', 'approval_ids'], type: 'too_long' })] } });
  });
});

ownedOperationsTest(() => h);
