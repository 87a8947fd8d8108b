/**
 * The page sizes of the sandbox's lists (src/api/schemas/limits.ts, shared with the client): each list refuses a
 * limit past its maximum with a 422 on `limit` (the client refuses it first, so only a raw request reaches the
 * sandbox with one), and the approved prices and deliveries hand out their default page (100) when no limit is given.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ApprovedPricePage, LIST_LIMITS } from '../../src/api/schemas/index.ts';
import { expectRefusedQueries, sandboxForFile } from './support.ts';

const h = sandboxForFile();
beforeAll(() => {
  // Enough for two default pages: a read without history moves what it hands out (the document's "omitted from
  // later reads"), so the deliveries read after the GET still finds more than a page.
  h.sandbox.control.injectApprovals({ count: 2 * LIST_LIMITS.approved_prices.default + 20 });
});

describe('page sizes of the lists', () => {
  it('the approved prices and the deliveries hand out 100 rows when no limit is given', async () => {
    const listed = ApprovedPricePage.parse((await h.client.get('/v1/approved_prices')).body);
    expect(listed.items).toHaveLength(LIST_LIMITS.approved_prices.default);
    expect(listed.next_cursor).toBeTruthy();
    const res = await h.client.post('/v1/approved_prices/deliveries', { request_id: randomUUID(), filters: {}, pagination: {} });
    expect(res.status).toBe(200);
    expect(ApprovedPricePage.parse(res.body).items).toHaveLength(LIST_LIMITS.approved_prices.default);
  });

  it.each([
    ['/v1/products', LIST_LIMITS.products.max],
    ['/v1/product_store', LIST_LIMITS.product_store.max],
    ['/v1/transactions', LIST_LIMITS.transactions.max],
    ['/v1/competitor_prices', LIST_LIMITS.competitor_prices.max],
    ['/v1/approved_prices', LIST_LIMITS.approved_prices.max],
  ])('%s refuses a limit past %i, and 0', async (path, max) => {
    await expectRefusedQueries(h, path, { [`limit=${max + 1}`]: 'limit', 'limit=0': 'limit' });
    expect((await h.client.get(`${path}?limit=${max}`)).status).toBe(200);
  });
});
