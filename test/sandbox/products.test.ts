import { describe, expect, it } from 'vitest';
import { BulkResponse, HTTPValidationError, Product, ProductPage } from '../../src/api/schemas/index.ts';
import { cursorParam, everyPage, expectRefusedQueries, firstError, open, sandboxForFile, uuidOf } from './support.ts';

const h = sandboxForFile();

describe('products: single upsert, PATCH, DELETE', () => {
  it('upserts on the path id: 201 with the full record, custom columns as top-level fields', async () => {
    const id = uuidOf(1);
    const created = await h.client.post(`/v1/products/${id}`, { item_id: 'P-1', sku: 'S-1', brand: 'Nordhof', Colour: 'red' });
    expect(created.status).toBe(201);
    expect(Product.parse(created.body)).toMatchObject({ id, item_id: 'P-1', sku: 'S-1', brand: 'Nordhof', Colour: 'red', product_name: null });
    const updated = await h.client.post(`/v1/products/${id}`, { item_id: 'P-1', sku: 'S-1b' });
    expect(updated.status).toBe(201);
    // An upsert replaces the record: fields not sent are cleared, custom columns too.
    expect(updated.body).toMatchObject({ id, sku: 'S-1b', brand: null });
    expect(updated.body).not.toHaveProperty('Colour');
  });

  it('refuses a non-UUID path id and a business key held by another product', async () => {
    const bad = await h.client.post('/v1/products/not-a-uuid', { item_id: 'P-2', sku: 'S' });
    expect(bad.status).toBe(422);
    expect(firstError(bad.body)).toMatchObject({ loc: ['path', 'entity_id'], type: 'uuid_parsing' });
    const clash = await h.client.post(`/v1/products/${uuidOf(2)}`, { item_id: 'P-1', sku: 'S' });
    expect(clash.status).toBe(422);
    expect(firstError(clash.body)).toMatchObject({ loc: ['body', 'item_id'], type: 'value_error' });
  });

  it('reports missing item_id and sku as type missing', async () => {
    const res = await h.client.post(`/v1/products/${uuidOf(3)}`, { product_name: 'x' });
    expect(res.status).toBe(422);
    const errors = HTTPValidationError.parse(res.body).detail;
    expect(errors.map((e) => [e.loc, e.type])).toEqual([
      [['body', 'item_id'], 'missing'],
      [['body', 'sku'], 'missing'],
    ]);
  });

  it('patches only the fields sent; null clears; 404 for an unknown id', async () => {
    const id = uuidOf(10);
    await h.client.post(`/v1/products/${id}`, { item_id: 'P-10', sku: 'S-10', brand: 'B', Season: 'winter' });
    const patched = await h.client.patch(`/v1/products/${id}`, { product_name: 'Tea', Season: null });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id, item_id: 'P-10', brand: 'B', product_name: 'Tea' });
    expect(patched.body).not.toHaveProperty('Season');
    expect((await h.client.patch(`/v1/products/${uuidOf(999)}`, { brand: 'x' })).status).toBe(404);
    const invalid = await h.client.patch(`/v1/products/${id}`, { sku: 5 });
    expect(invalid.status).toBe(422);
    expect(firstError(invalid.body).loc).toEqual(['body', 'sku']);
  });

  it('deletes with 204, again 204 once gone, 404 for an id that never existed', async () => {
    const id = uuidOf(20);
    await h.client.post(`/v1/products/${id}`, { item_id: 'P-20', sku: 'S-20' });
    expect((await h.client.delete(`/v1/products/${id}`)).status).toBe(204);
    expect((await h.client.delete(`/v1/products/${id}`)).status).toBe(204);
    expect((await h.client.delete(`/v1/products/${uuidOf(21)}`)).status).toBe(404);
    // The business key is free again.
    const again = await h.client.post('/v1/products/bulk', { items: [{ item_id: 'P-20', sku: 'S-20' }] });
    expect((again.body as BulkResponse).results[0]).toMatchObject({ ok: true });
  });
});

describe('products: bulk and list', () => {
  it('is idempotent per item_id and never all-or-nothing', async () => {
    const items = [
      { item_id: 'B-1', sku: 'B-1', Size: 'XL' },
      { item_id: 'B-2' },
      { item_id: 'B-3', sku: 'B-3', product_name: 'x'.repeat(1001) },
    ];
    const first = BulkResponse.parse((await h.client.post('/v1/products/bulk', { items })).body);
    expect(first.results.map((r) => [r.index, r.ok, r.code])).toEqual([
      [0, true, undefined],
      [1, false, 'validation_error'],
      [2, false, 'validation_error'],
    ]);
    expect(first.results[1]!.message).toBe('body.items.1.sku: Field required');
    expect(first.results[2]!.message).toContain('body.items.2.product_name');
    const count = h.sandbox.control.state().products.count;
    const second = BulkResponse.parse((await h.client.post('/v1/products/bulk', { items: [{ item_id: 'B-1', sku: 'B-1b' }] })).body);
    expect(second.results[0]!.id).toBe(first.results[0]!.id);
    expect(h.sandbox.control.state().products.count).toBe(count);
  });

  it('refuses an envelope whose items is not an array', async () => {
    for (const body of [[{ item_id: 'x' }], { items: { item_id: 'x' } }, {}]) {
      const res = await h.client.post('/v1/products/bulk', body);
      expect(res.status).toBe(422);
      expect(firstError(res.body).loc.slice(0, 1)).toEqual(['body']);
    }
  });

  it('pages with opaque cursors and filters by updated_after (inclusive)', async () => {
    const fresh = await open();
    try {
      const items = Array.from({ length: 25 }, (_, i) => ({ item_id: `L-${i}`, sku: `L-${i}` }));
      await fresh.client.post('/v1/products/bulk', { items: items.slice(0, 20) });
      await fresh.clock.advance(60_000);
      const mark = new Date(fresh.clock.now()).toISOString();
      await fresh.client.post('/v1/products/bulk', { items: items.slice(20) });
      const pages = await everyPage(async (cursor) => ProductPage.parse((await fresh.client.get(`/v1/products?limit=10${cursorParam(cursor)}`)).body));
      const seen = pages.flatMap((page) => page.items.map((p) => p.item_id));
      expect(seen).toEqual(items.map((i) => i.item_id));
      const recent = ProductPage.parse((await fresh.client.get(`/v1/products?updated_after=${mark}`)).body);
      expect(recent.items.map((p) => p.item_id)).toEqual(['L-20', 'L-21', 'L-22', 'L-23', 'L-24']);
      expect(recent.items[0]!.updated_at).toBe(mark);
    } finally {
      await fresh.close();
    }
  });

  it('refuses limits out of range and foreign cursors with 422 on the query', async () => {
    await expectRefusedQueries(h, '/v1/products', { 'limit=0': 'limit', 'limit=10001': 'limit', 'limit=ten': 'limit', 'cursor=bm9wZQ': 'cursor', 'updated_after=yesterday': 'updated_after' });
  });
});
