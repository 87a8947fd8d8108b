import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ApprovedPricePage, type ApprovedPricePage as Page } from '../../src/api/schemas/index.ts';
import { firstError, open, sandboxForFile } from './support.ts';

const h = sandboxForFile();
beforeAll(() => {
  h.sandbox.control.injectApprovals({ count: 12, product_level_share: 0.25 });
});

async function deliver(requestId: string, pagination: { limit?: number; cursor?: string } = {}, filters = {}) {
  const res = await h.client.post('/v1/approved_prices/deliveries', { request_id: requestId, filters, pagination });
  expect(res.status).toBe(200);
  return { text: res.text, page: ApprovedPricePage.parse(res.body) };
}

describe('POST /v1/approved_prices/deliveries', () => {
  it('delivers pages in id order with predecessor_id, amendment_reason and delivery_channel', async () => {
    const { page } = await deliver(randomUUID(), { limit: 5 });
    expect(page.items.map((a) => a.id)).toEqual([1, 2, 3, 4, 5]);
    for (const a of page.items) {
      // A page shows the row as selected: pending on its first delivery; exported_api from then on.
      expect(a).toMatchObject({ delivery_channel: 'client_api', predecessor_id: null, amendment_reason: null, export_status: 'pending' });
    }
    expect(page.next_cursor).not.toBeNull();
    const again = await deliver(randomUUID(), { limit: 1 });
    expect(again.page.items[0]).toMatchObject({ id: 1, export_status: 'exported_api' });
  });

  it('replays the identical page for the same request_id, whatever changed since', async () => {
    const requestId = randomUUID();
    const first = await deliver(requestId, { limit: 4 });
    h.sandbox.control.cancel(first.page.items[0]!.id);
    h.sandbox.control.amend(first.page.items[1]!.id, { reason: 'typo' });
    await h.client.post('/v1/approved_prices/acknowledge', { approval_ids: [first.page.items[2]!.id] });
    await h.clock.advance(60_000);
    const replay = await deliver(requestId, { limit: 50 }, { store_id: h.sandbox.control.stores[0] });
    expect(replay.text).toBe(first.text);
    expect(h.sandbox.control.state().deliveries.replays).toBe(1);
  });

  it('a new request_id with the same cursor continues from it; rows that left the set are not skipped over', async () => {
    const fresh = await open();
    try {
      fresh.sandbox.control.injectApprovals({ count: 10 });
      const post = async (cursor?: string): Promise<Page> => {
        const body = { request_id: randomUUID(), pagination: cursor === undefined ? { limit: 3 } : { limit: 3, cursor } };
        return ApprovedPricePage.parse((await fresh.client.post('/v1/approved_prices/deliveries', body)).body);
      };
      const p1 = await post();
      // The agent acknowledges page 1 before fetching page 2: the keyset cursor still lands right after it.
      await fresh.client.post('/v1/approved_prices/acknowledge', { approval_ids: p1.items.map((a) => a.id) });
      const p2 = await post(p1.next_cursor!);
      const p2again = await post(p1.next_cursor!);
      expect(p2.items.map((a) => a.id)).toEqual([4, 5, 6]);
      expect(p2again.items.map((a) => a.id)).toEqual([4, 5, 6]);
      const p3 = await post(p2.next_cursor!);
      const p4 = await post(p3.next_cursor!);
      expect([...p3.items, ...p4.items].map((a) => a.id)).toEqual([7, 8, 9, 10]);
      expect(p4.next_cursor).toBeNull();
      // From the start again: unacknowledged rows come again (at least once), acknowledged ones never.
      const restart = await post();
      expect(restart.items.map((a) => a.id)).toEqual([4, 5, 6]);
    } finally {
      await fresh.close();
    }
  });

  it('delivers an amendment as a new version and no longer the superseded one', async () => {
    const fresh = await open();
    try {
      fresh.sandbox.control.injectApprovals({ count: 3 });
      const amended = fresh.sandbox.control.amend(2, { approved_price: '9.99', reason: 'competitor moved' });
      const body = { request_id: randomUUID() };
      const page = ApprovedPricePage.parse((await fresh.client.post('/v1/approved_prices/deliveries', body)).body);
      expect(page.items.map((a) => a.id)).toEqual([1, 3, 4]);
      expect(page.items[2]).toMatchObject({ id: amended.id, predecessor_id: 2, amendment_reason: 'competitor moved', approved_price: '9.99' });
      const historic = { request_id: randomUUID(), filters: { history: true } };
      const all = ApprovedPricePage.parse((await fresh.client.post('/v1/approved_prices/deliveries', historic)).body);
      expect(all.items.map((a) => a.id)).toEqual([1, 2, 3, 4]);
    } finally {
      await fresh.close();
    }
  });

  it('requires request_id and refuses foreign cursors and limits out of range', async () => {
    const missing = await h.client.post('/v1/approved_prices/deliveries', { pagination: { limit: 5 } });
    expect(firstError(missing.body)).toMatchObject({ loc: ['body', 'request_id'], type: 'missing' });
    const badCursor = await h.client.post('/v1/approved_prices/deliveries', { request_id: randomUUID(), pagination: { cursor: 'abc' } });
    expect(firstError(badCursor.body).loc).toEqual(['body', 'pagination', 'cursor']);
    const badLimit = await h.client.post('/v1/approved_prices/deliveries', { request_id: randomUUID(), pagination: { limit: 501 } });
    expect(firstError(badLimit.body).loc).toEqual(['body', 'pagination', 'limit']);
  });
});
