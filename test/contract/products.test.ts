/**
 * Products through the client: single upsert keyed on the path id (201), PATCH (200, 404), DELETE (204, also when
 * already gone), bulk (200, one result per row in index order, idempotent per item_id), the enriched list with
 * custom columns and cursor paging, and a CSV import (202 + a job that lands rows in the same store).
 */
import { describe, expect, it } from 'vitest';
import { API_ERROR_CODES } from '../../src/api/errors.ts';
import { BulkResponse, Product, ProductPage, type ProductWrite } from '../../src/api/schemas/index.ts';
import { allPages, contractForFile, errorOf, ownedOperationsTest, pagedThrough, pollJob, uuidOf } from './support.ts';

const h = contractForFile('products');

describe('products.upsert', () => {
  it('creates with 201 and the full record under the path id, custom columns as top-level fields', async () => {
    const id = uuidOf(1);
    const created = await h.client.products.upsert(id, { item_id: 'P-1', sku: 'S-1', brand: 'Nordhof', Colour: 'red' });
    expect(h.lastStatus('products.upsert')).toBe(201);
    expect(Product.parse(created)).toMatchObject({ id, item_id: 'P-1', sku: 'S-1', brand: 'Nordhof', Colour: 'red' });
    for (const field of ['product_id', 'product_name', 'manufacturer', 'product_type', 'status']) expect(created).toHaveProperty(field, null);
  });

  it('updates the same id with 201 again: the record is replaced, not merged', async () => {
    const id = uuidOf(1);
    const updated = await h.client.products.upsert(id, { item_id: 'P-1', sku: 'S-1b', product_name: 'Tea' });
    expect(h.lastStatus('products.upsert')).toBe(201);
    expect(updated).toMatchObject({ id, sku: 'S-1b', product_name: 'Tea', brand: null });
    expect(updated).not.toHaveProperty('Colour');
  });

  it('refuses an item_id held by another product: 422 with loc, msg and type from the sandbox', async () => {
    const error = await errorOf(() => h.client.products.upsert(uuidOf(2), { item_id: 'P-1', sku: 'S-2' }));
    expect(error).toMatchObject({ code: API_ERROR_CODES.validation, status: 422, operation: 'products.upsert', retryable: false });
    expect(error.detail).toEqual([expect.objectContaining({ loc: ['body', 'item_id'], type: 'value_error', msg: expect.any(String) as unknown })]);
  });

  it('refuses a missing sku locally, before sending', async () => {
    const before = h.responseCount();
    const error = await errorOf(() => h.client.products.upsert(uuidOf(3), { item_id: 'P-3' } as never));
    expect(error.code).toBe(API_ERROR_CODES.localValidation);
    expect(h.responseCount()).toBe(before);
  });
});

describe('products.patch and products.delete', () => {
  it('patches only the fields sent (200); null removes a custom column', async () => {
    const id = uuidOf(10);
    await h.client.products.upsert(id, { item_id: 'P-10', sku: 'S-10', brand: 'B', Season: 'winter' });
    const patched = await h.client.products.patch(id, { product_name: 'Coffee', Season: null });
    expect(h.lastStatus('products.patch')).toBe(200);
    expect(patched).toMatchObject({ id, item_id: 'P-10', sku: 'S-10', brand: 'B', product_name: 'Coffee' });
    expect(patched).not.toHaveProperty('Season');
  });

  it('answers 404 for a patch of an unknown id, as an ApiError with code and status', async () => {
    const error = await errorOf(() => h.client.products.patch(uuidOf(999), { brand: 'x' }));
    expect(error).toMatchObject({ code: API_ERROR_CODES.notFound, status: 404, operation: 'products.patch', retryable: false });
    expect(h.lastStatus('products.patch')).toBe(404);
  });

  it('deletes with 204, and 204 again once the row is gone', async () => {
    const id = uuidOf(20);
    await h.client.products.upsert(id, { item_id: 'P-20', sku: 'S-20' });
    await expect(h.client.products.delete(id)).resolves.toBeUndefined();
    expect(h.lastStatus('products.delete')).toBe(204);
    await expect(h.client.products.delete(id)).resolves.toBeUndefined();
    expect(h.statuses.get('products.delete')).toEqual([204, 204]);
  });
});

describe('products.bulk', () => {
  it('answers 200 with one result per row in index order; a bad row does not stop the others', async () => {
    const items: ProductWrite[] = [
      { item_id: 'B-1', sku: 'B-1', Size: 'XL' },
      { item_id: 'B-2', sku: 'B-2', product_name: 'x'.repeat(1001) },
      { item_id: 'B-3', sku: 'B-3' },
    ];
    const first = await h.client.products.bulk(items);
    expect(h.lastStatus('products.bulk')).toBe(200);
    expect(BulkResponse.parse(first).results.map((r) => [r.index, r.ok])).toEqual([
      [0, true],
      [1, false],
      [2, true],
    ]);
    expect(first.results[1]).toMatchObject({ code: 'validation_error', message: expect.stringContaining('product_name') as unknown });
    expect(first.results[1]).not.toHaveProperty('id');

    // Idempotent per item_id: the same batch again keeps the same ids.
    const again = await h.client.products.bulk(items);
    expect(again.results.map((r) => r.id)).toEqual(first.results.map((r) => r.id));
  });
});

describe('products.list', () => {
  it('pages with limit and cursor through every product, custom columns included', async () => {
    const { pages, rows } = await pagedThrough(h, 'products.list', h.client.products.list({ limit: 2 }));
    for (const page of pages.slice(0, -1)) expect(page.items).toHaveLength(2);
    expect(rows.map((r) => r.item_id).sort()).toEqual(['B-1', 'B-3', 'P-1', 'P-10']);
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
    expect(rows.find((r) => r.item_id === 'B-1')).toMatchObject({ Size: 'XL' });
    for (const row of rows) Product.parse(row);
  });

  it('filters with updated_after (at or after)', async () => {
    const row = await h.client.products.upsert(uuidOf(30), { item_id: 'P-30', sku: 'S-30' });
    const since = String(row.updated_at);
    const rows = (await allPages(h.client.products.list({ updated_after: since }))).flatMap((p) => p.items);
    expect(rows.map((r) => r.item_id)).toContain('P-30');
    for (const r of rows) expect(Date.parse(String(r.updated_at))).toBeGreaterThanOrEqual(Date.parse(since));
  });

  it('refuses a limit above the maximum locally', async () => {
    const error = await errorOf(() => h.client.products.list({ limit: 10_001 }));
    expect(error.code).toBe(API_ERROR_CODES.localValidation);
  });

  it('returns the envelope {items, next_cursor}', async () => {
    const res = await h.raw('GET', '/v1/products?limit=1');
    expect(res.status).toBe(200);
    expect(Object.keys(ProductPage.parse(res.body)).sort()).toEqual(['items', 'next_cursor']);
  });
});

describe('products.import', () => {
  it('answers 202 with a job id; the job completes and extra columns become custom columns', async () => {
    const path = await h.csv('products.csv', 'item_id,sku,product_name,Shelf\nI-1,I-1,Rice,Top\nI-2,I-2,Pasta,\nP-1,S-1c,Tea,Low\n');
    const handle = await h.client.products.import(path);
    expect(h.lastStatus('products.import')).toBe(202);
    const job = await pollJob(h, handle.job_id);
    expect(job).toMatchObject({ job_id: handle.job_id, status: 'completed', progress: 100, rows_ok: 3, rows_failed: 0 });
    const rows = (await allPages(h.client.products.list())).flatMap((p) => p.items);
    expect(rows.find((r) => r.item_id === 'I-1')).toMatchObject({ product_name: 'Rice', Shelf: 'Top' });
    expect(rows.find((r) => r.item_id === 'I-2')).not.toHaveProperty('Shelf');
    // Imported rows land in the same store as single and bulk writes: P-1 keeps its id.
    expect(rows.find((r) => r.item_id === 'P-1')).toMatchObject({ id: uuidOf(1), sku: 'S-1c', Shelf: 'Low' });
  });

  it('refuses an empty file with 422 from the sandbox', async () => {
    const path = await h.csv('empty.csv', '');
    const error = await errorOf(() => h.client.products.import(path));
    expect(error).toMatchObject({ code: API_ERROR_CODES.validation, status: 422 });
    expect(error.detail).toEqual([{ loc: ['body', 'file'], msg: 'Value error, the file is empty', type: 'value_error' }]);
  });
});

ownedOperationsTest(() => h);
