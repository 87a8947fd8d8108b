/**
 * Product-store records through the client: upsert on (item_id, store_id), GET by id, PATCH, DELETE (204), bulk
 * with the specific row codes for an unknown store and a duplicate key within a batch, the cursor list with its
 * filters, and a CSV import. The known stores are the sandbox's seeded ones.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { API_ERROR_CODES } from '../../src/api/errors.ts';
import { DECIMAL_PATTERN, ProductStoreRecord } from '../../src/api/schemas/index.ts';
import { allPages, contractForFile, errorOf, ownedOperationsTest, pagedThrough, pollJob, uuidOf } from './support.ts';

let storeA: string;
let storeB: string;
const h = contractForFile('product-store');
beforeAll(() => {
  [storeA = '', storeB = ''] = h.sandbox.control.stores;
});

describe('productStore.upsert and productStore.get', () => {
  it('creates a record (201) with a UUID id and decimal strings', async () => {
    const record = await h.client.productStore.upsert({
      item_id: 'I-1',
      store_id: storeA,
      current_price: '4.99',
      regular_price: '5.49',
      stock_on_hand: 12,
      price_effective_date: '2026-12-01',
    });
    expect(h.lastStatus('productStore.upsert')).toBe(201);
    expect(ProductStoreRecord.parse(record)).toMatchObject({ item_id: 'I-1', store_id: storeA, current_price: '4.99', stock_on_hand: 12 });
    expect(record.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(record.regular_price).toMatch(DECIMAL_PATTERN);
  });

  it('upserts on (item_id, store_id): the same pair keeps its id; another store is another record', async () => {
    const first = await h.client.productStore.upsert({ item_id: 'I-2', store_id: storeA, current_price: '1.00' });
    const again = await h.client.productStore.upsert({ item_id: 'I-2', store_id: storeA, current_price: '1.10' });
    const other = await h.client.productStore.upsert({ item_id: 'I-2', store_id: storeB, current_price: '1.20' });
    expect(again).toMatchObject({ id: first.id, current_price: '1.10' });
    expect(other.id).not.toBe(first.id);
  });

  it('refuses an unknown store with 422 on body.store_id (value_error)', async () => {
    const error = await errorOf(() => h.client.productStore.upsert({ item_id: 'I-3', store_id: 'no-such-store', current_price: '1' }));
    expect(error).toMatchObject({ code: API_ERROR_CODES.validation, status: 422, operation: 'productStore.upsert' });
    expect(error.detail).toEqual([expect.objectContaining({ loc: ['body', 'store_id'], type: 'value_error', msg: expect.stringContaining('unknown store') as unknown })]);
  });

  it('reads one record by id (200) and answers 404 for an unknown id', async () => {
    const created = await h.client.productStore.upsert({ item_id: 'I-4', store_id: storeA, current_price: '2.50', currency: 'EUR' });
    const read = await h.client.productStore.get(created.id);
    expect(h.lastStatus('productStore.get')).toBe(200);
    expect(read).toEqual(created);
    const error = await errorOf(() => h.client.productStore.get(uuidOf(404)));
    expect(error).toMatchObject({ code: API_ERROR_CODES.notFound, status: 404 });
  });
});

describe('productStore.patch and productStore.delete', () => {
  it('patches only the fields sent (200); 404 for an unknown id', async () => {
    const created = await h.client.productStore.upsert({ item_id: 'I-5', store_id: storeA, current_price: '3.00', store_name: 'Main St' });
    const patched = await h.client.productStore.patch(created.id, { current_price: '2.75', tax_rate: '0.2' });
    expect(h.lastStatus('productStore.patch')).toBe(200);
    expect(patched).toMatchObject({ id: created.id, current_price: '2.75', tax_rate: '0.2', store_name: 'Main St' });
    const error = await errorOf(() => h.client.productStore.patch(uuidOf(405), { current_price: '1' }));
    expect(error).toMatchObject({ code: API_ERROR_CODES.notFound, status: 404, operation: 'productStore.patch' });
  });

  it('deletes with 204 (again 204 once gone); the record is then 404', async () => {
    const created = await h.client.productStore.upsert({ item_id: 'I-6', store_id: storeA, current_price: '1' });
    await h.client.productStore.delete(created.id);
    await h.client.productStore.delete(created.id);
    expect(h.statuses.get('productStore.delete')).toEqual([204, 204]);
    await expect(errorOf(() => h.client.productStore.get(created.id))).resolves.toMatchObject({ status: 404 });
  });
});

describe('productStore.bulk', () => {
  it('answers 200 with row codes unknown_store and duplicate_key; the other rows are written', async () => {
    const result = await h.client.productStore.bulk([
      { item_id: 'K-1', store_id: storeA, current_price: '1.00' },
      { item_id: 'K-2', store_id: 'nowhere', current_price: '1.00' },
      { item_id: 'K-1', store_id: storeA, current_price: '1.05' },
      { item_id: 'K-1', store_id: storeB, current_price: '1.10' },
    ]);
    expect(h.lastStatus('productStore.bulk')).toBe(200);
    expect(result.results.map((r) => [r.index, r.ok, r.code ?? null])).toEqual([
      [0, true, null],
      [1, false, 'unknown_store'],
      [2, false, 'duplicate_key'],
      [3, true, null],
    ]);
    for (const r of result.results) expect(r.ok ? typeof r.id : typeof r.message).toBe('string');
    // The first occurrence of the duplicated key was written.
    const rows = (await allPages(h.client.productStore.list({ item_id: 'K-1', store_id: storeA }))).flatMap((p) => p.items);
    expect(rows).toEqual([expect.objectContaining({ id: result.results[0]?.id, current_price: '1.00' })]);
  });
});

describe('productStore.list', () => {
  it('pages {items, next_cursor} with limit and cursor, and filters by item_id and store_id', async () => {
    const { rows } = await pagedThrough(h, 'productStore.list', h.client.productStore.list({ limit: 3 }));
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
    expect(rows.length).toBe(h.sandbox.control.state({ keys: false }).product_store.count);
    const inB = (await allPages(h.client.productStore.list({ store_id: storeB }))).flatMap((p) => p.items);
    // The seed's one record per store (ITM-...), as in a real account, besides the test's own.
    expect(inB.map((r) => r.item_id).sort()).toEqual(['I-2', 'ITM-000002', 'K-1']);
  });

  it('refuses a malformed cursor with 422 on query.cursor', async () => {
    const error = await errorOf(() => allPages(h.client.productStore.list({ cursor: 'not-a-cursor' })));
    expect(error).toMatchObject({ code: API_ERROR_CODES.validation, status: 422 });
    expect(error.detail?.[0]).toMatchObject({ loc: ['query', 'cursor'], type: 'value_error' });
  });
});

describe('productStore.import', () => {
  it('answers 202; the job completes with per-line row errors and writes the good rows', async () => {
    const csv = [
      'item_id,store_id,current_price,stock_on_hand',
      `M-1,${storeA},9.99,4`,
      `M-2,unknown-store,1.00,1`,
      `M-1,${storeA},9.89,4`,
      `M-3,${storeB},2.00,`,
    ].join('\n');
    const handle = await h.client.productStore.import(await h.csv('product_store.csv', `${csv}\n`));
    expect(h.lastStatus('productStore.import')).toBe(202);
    const job = await pollJob(h, handle.job_id);
    expect(job).toMatchObject({ status: 'completed', job_type: 'import_product_store', rows_ok: 2, rows_failed: 2 });
    expect(job.errors?.map((e) => [e.line, e.code])).toEqual([
      [3, 'unknown_store'],
      [4, 'duplicate_key'],
    ]);
    const m1 = (await allPages(h.client.productStore.list({ item_id: 'M-1' }))).flatMap((p) => p.items);
    expect(m1).toEqual([expect.objectContaining({ store_id: storeA, current_price: '9.99', stock_on_hand: 4 })]);
  });
});

ownedOperationsTest(() => h);
