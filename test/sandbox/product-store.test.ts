import { beforeAll, describe, expect, it } from 'vitest';
import { BulkResponse, ProductStorePage, ProductStoreRecord } from '../../src/api/schemas/index.ts';
import { firstError, sandboxForFile, uuidOf } from './support.ts';

let stores: readonly string[];
const h = sandboxForFile();
beforeAll(() => {
  stores = h.sandbox.control.stores;
});

describe('product_store', () => {
  it('seeds 20 known stores', () => {
    expect(stores).toHaveLength(20);
    expect(new Set(stores).size).toBe(20);
  });

  it('bulk: unknown_store and duplicate_key are row errors, the first occurrence is written', async () => {
    const [s1, s2] = stores;
    const items = [
      { item_id: 'A', store_id: s1, current_price: 1.5, stock_on_hand: 3 },
      { item_id: 'A', store_id: s1, current_price: '9.99' },
      { item_id: 'A', store_id: s2, current_price: '2.00' },
      { item_id: 'A', store_id: 'store-x', current_price: '2.00' },
      { item_id: 'B', store_id: s1 },
      { item_id: 'A', store_id: s1, current_price: '7.00' },
    ];
    const res = await h.client.post('/v1/product_store/bulk', { items });
    expect(res.status).toBe(200);
    const { results } = BulkResponse.parse(res.body);
    expect(results.map((r) => r.code ?? 'ok')).toEqual(['ok', 'duplicate_key', 'ok', 'unknown_store', 'validation_error', 'duplicate_key']);
    expect(results[4]!.message).toBe('body.items.4.current_price: Field required');
    const page = ProductStorePage.parse((await h.client.get(`/v1/product_store?item_id=A&store_id=${s1}`)).body);
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({ current_price: '1.5', stock_on_hand: 3, id: results[0]!.id });
  });

  it('single POST upserts on (item_id, store_id) with 201; an unknown store is a 422 on store_id', async () => {
    const first = await h.client.post('/v1/product_store', { item_id: 'C', store_id: stores[3], current_price: '1.00' });
    expect(first.status).toBe(201);
    const record = ProductStoreRecord.parse(first.body);
    const second = await h.client.post('/v1/product_store', { item_id: 'C', store_id: stores[3], current_price: '1.10', currency: 'EUR' });
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ id: record.id, current_price: '1.10', currency: 'EUR' });
    const unknown = await h.client.post('/v1/product_store', { item_id: 'C', store_id: 'nowhere', current_price: '1.00' });
    expect(unknown.status).toBe(422);
    expect(firstError(unknown.body)).toMatchObject({ loc: ['body', 'store_id'], type: 'value_error' });
  });

  it('GET, PATCH and DELETE by id', async () => {
    const created = ProductStoreRecord.parse(
      (await h.client.post('/v1/product_store', { item_id: 'D', store_id: stores[4], current_price: '3.00' })).body,
    );
    const read = await h.client.get(`/v1/product_store/${created.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created);
    const patched = await h.client.patch(`/v1/product_store/${created.id}`, { unit_cost: 1.25, price_effective_date: '2026-12-01' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ current_price: '3.00', unit_cost: '1.25', price_effective_date: '2026-12-01' });
    const badStore = await h.client.patch(`/v1/product_store/${created.id}`, { store_id: 'nowhere' });
    expect(badStore.status).toBe(422);
    const badDate = await h.client.patch(`/v1/product_store/${created.id}`, { price_effective_date: '01.12.2026' });
    expect(firstError(badDate.body)).toMatchObject({ loc: ['body', 'price_effective_date'], type: 'date_parsing' });
    expect((await h.client.get(`/v1/product_store/${uuidOf(77)}`)).status).toBe(404);
    expect((await h.client.delete(`/v1/product_store/${created.id}`)).status).toBe(204);
    expect((await h.client.delete(`/v1/product_store/${created.id}`)).status).toBe(204);
    expect((await h.client.get(`/v1/product_store/${created.id}`)).status).toBe(404);
    expect((await h.client.patch(`/v1/product_store/${created.id}`, { status: 'x' })).status).toBe(404);
  });

  it('PATCH onto another record\'s key is a 422', async () => {
    const a = ProductStoreRecord.parse((await h.client.post('/v1/product_store', { item_id: 'E', store_id: stores[5], current_price: '1' })).body);
    await h.client.post('/v1/product_store', { item_id: 'E', store_id: stores[6], current_price: '1' });
    const clash = await h.client.patch(`/v1/product_store/${a.id}`, { store_id: stores[6] });
    expect(clash.status).toBe(422);
  });

  it('lists with filters item_id and store_id', async () => {
    const byStore = ProductStorePage.parse((await h.client.get(`/v1/product_store?store_id=${stores[0]}`)).body);
    expect(byStore.items.every((r) => r.store_id === stores[0])).toBe(true);
    expect(byStore.items.length).toBeGreaterThan(0);
    expect(h.sandbox.control.state().product_store.keys).toContainEqual({ item_id: 'A', store_id: stores[1] });
  });
});
