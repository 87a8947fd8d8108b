import { describe, expect, it } from 'vitest';
import { BulkResponse, CompetitorPrice, CompetitorPricePage, HTTPValidationError } from '../../src/api/schemas/index.ts';
import { firstError, sandboxForFile } from './support.ts';

const h = sandboxForFile();

const price = (extra: Record<string, unknown> = {}) => ({
  competitor_name: 'MegaMart',
  item_id: 'I-1',
  competitor_sku: 'MM-1',
  observed_at: '2026-11-20T08:00:00Z',
  regular_price: '2.49',
  effective_price: 2.29,
  ...extra,
});

describe('competitor prices', () => {
  it('the single create makes a new row every time (integer ids) and is counted separately', async () => {
    const a = await h.client.post('/v1/competitor_prices', price());
    const b = await h.client.post('/v1/competitor_prices', price());
    expect([a.status, b.status]).toEqual([201, 201]);
    const [ra, rb] = [CompetitorPrice.parse(a.body), CompetitorPrice.parse(b.body)];
    expect(rb.id).toBe(ra.id + 1);
    expect(ra).not.toHaveProperty('effective_price'); // write-side only
    const state = h.sandbox.control.state().competitor_prices;
    expect(state).toMatchObject({ count: 2, single_creates: 2 });
  });

  it('bulk is idempotent on (competitor_name, item_id, competitor_sku, observed_at), observed_at as an instant', async () => {
    const first = BulkResponse.parse((await h.client.post('/v1/competitor_prices/bulk', { items: [price({ competitor_name: 'Shopline' })] })).body);
    const again = BulkResponse.parse(
      (
        await h.client.post('/v1/competitor_prices/bulk', {
          items: [price({ competitor_name: 'Shopline', observed_at: '2026-11-20T09:00:00.000+01:00', regular_price: '2.59' })],
        })
      ).body,
    );
    expect(again.results[0]!.id).toBe(first.results[0]!.id);
    expect(typeof first.results[0]!.id).toBe('number');
    const page = CompetitorPricePage.parse((await h.client.get('/v1/competitor_prices?competitor_name=Shopline')).body);
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({ regular_price: '2.59' });
    expect(h.sandbox.control.state().competitor_prices).toMatchObject({ count: 3, single_creates: 2 });
  });

  it('a bulk row with the key of a single create updates that row', async () => {
    const res = BulkResponse.parse((await h.client.post('/v1/competitor_prices/bulk', { items: [price({ promo_price: '1.99' })] })).body);
    expect(res.results[0]!.id).toBe(1);
    expect(h.sandbox.control.state().competitor_prices.count).toBe(3);
  });

  it('reports the four required write fields as missing', async () => {
    const res = await h.client.post('/v1/competitor_prices', {});
    expect(res.status).toBe(422);
    expect(HTTPValidationError.parse(res.body).detail.map((e) => `${String(e.loc[1])}:${e.type}`).sort()).toEqual([
      'competitor_name:missing',
      'effective_price:missing',
      'observed_at:missing',
      'regular_price:missing',
    ]);
  });

  it('PATCH and DELETE by integer id; a non-integer id is 422', async () => {
    const patched = await h.client.patch('/v1/competitor_prices/2', { status: 'out_of_stock', stock_on_hand: '0' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: 2, status: 'out_of_stock', stock_on_hand: '0' });
    const bad = await h.client.patch('/v1/competitor_prices/abc', { status: 'x' });
    expect(firstError(bad.body)).toMatchObject({ loc: ['path', 'entity_id'], type: 'int_parsing' });
    expect((await h.client.delete('/v1/competitor_prices/2')).status).toBe(204);
    expect((await h.client.delete('/v1/competitor_prices/2')).status).toBe(204);
    expect((await h.client.delete('/v1/competitor_prices/999')).status).toBe(404);
  });

  it('lists with the item_id filter', async () => {
    await h.client.post('/v1/competitor_prices/bulk', { items: [price({ item_id: 'I-2' })] });
    const page = CompetitorPricePage.parse((await h.client.get('/v1/competitor_prices?item_id=I-2')).body);
    expect(page.items.map((p) => p.item_id)).toEqual(['I-2']);
  });
});
