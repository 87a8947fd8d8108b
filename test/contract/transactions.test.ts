/**
 * Transactions through the client: bulk (200, per-row results, idempotent per transaction_id), single upsert keyed
 * on the path id (201), PATCH (200, 404), DELETE (204), the list with its `data` envelope, filters, limit and cursor,
 * and a CSV import.
 */
import { describe, expect, it } from 'vitest';
import { API_ERROR_CODES } from '../../src/api/errors.ts';
import type { TransactionListQuery } from '../../src/api/resources/transactions.ts';
import { Transaction, TransactionPage, type TransactionWrite } from '../../src/api/schemas/index.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { allPages, contractForFile, errorOf, ownedOperationsTest, pollJob, uuidOf } from './support.ts';

/** The sandbox's clock: updated_at moves only when the test says, so updated_after is exact. */
const clock = new ManualClock();
const h = contractForFile('transactions', { clock });

const tx = (n: number, over: Partial<TransactionWrite> = {}): TransactionWrite => ({
  transaction_id: `T-${n}`,
  item_id: `I-${n % 3}`,
  transaction_timestamp: `2026-11-0${1 + (n % 9)}T12:00:00Z`,
  store_id: n % 2 === 0 ? 'store-even' : 'store-odd',
  quantity: '2',
  price: '1.50',
  revenue: '3.00',
  currency: 'EUR',
  is_promo: n % 4 === 0,
  ...over,
});

describe('transactions.bulk', () => {
  it('answers 200 with one result per row in index order, idempotent per transaction_id', async () => {
    const items = Array.from({ length: 8 }, (_, i) => tx(i + 1));
    const first = await h.client.transactions.bulk(items);
    expect(h.lastStatus('transactions.bulk')).toBe(200);
    expect(first.results.map((r) => [r.index, r.ok])).toEqual(items.map((_, i) => [i, true]));
    const again = await h.client.transactions.bulk(items);
    expect(again.results.map((r) => r.id)).toEqual(first.results.map((r) => r.id));
    expect(h.sandbox.control.state({ keys: false }).transactions.count).toBe(8);
  });

  it('reports an unparsable decimal as a row validation_error; the rest are written', async () => {
    const result = await h.client.transactions.bulk([tx(20), tx(21, { price: 'abc' }), tx(22)]);
    expect(result.results.map((r) => [r.ok, r.code ?? null])).toEqual([
      [true, null],
      [false, 'validation_error'],
      [true, null],
    ]);
    expect(result.results[1]?.message).toContain('price');
  });
});

describe('transactions.upsert, patch and delete', () => {
  it('creates with 201 under the path id and returns the read shape', async () => {
    const id = uuidOf(1);
    const created = await h.client.transactions.upsert(id, tx(100));
    expect(h.lastStatus('transactions.upsert')).toBe(201);
    expect(Transaction.parse(created)).toMatchObject({
      transaction_id: 'T-100',
      timestamp: '2026-11-02T12:00:00Z',
      quantity: '2',
      price: '1.50',
      revenue: '3.00',
      is_promo: true,
    });
    expect(created).toHaveProperty('id', id);
  });

  it('patches only the fields sent (200); 404 for an unknown id', async () => {
    const patched = await h.client.transactions.patch(uuidOf(1), { price: '1.25', revenue: '2.50' });
    expect(h.lastStatus('transactions.patch')).toBe(200);
    expect(patched).toMatchObject({ transaction_id: 'T-100', price: '1.25', revenue: '2.50', quantity: '2' });
    const error = await errorOf(() => h.client.transactions.patch(uuidOf(2), { price: '1' }));
    expect(error).toMatchObject({ code: API_ERROR_CODES.notFound, status: 404, operation: 'transactions.patch' });
  });

  it('refuses a malformed transaction_timestamp locally (the sandbox would answer datetime_parsing)', async () => {
    const before = h.responseCount();
    const error = await errorOf(() => h.client.transactions.upsert(uuidOf(3), tx(101, { transaction_timestamp: '01/11/2026' })));
    expect(error.code).toBe(API_ERROR_CODES.localValidation);
    expect(h.responseCount()).toBe(before);
    const raw = await h.raw('POST', `/v1/transactions/${uuidOf(3)}`, JSON.stringify(tx(101, { transaction_timestamp: '01/11/2026' })));
    expect(raw.status).toBe(422);
    expect(raw.body).toEqual({ detail: [expect.objectContaining({ loc: ['body', 'transaction_timestamp'], type: 'datetime_parsing' })] });
  });

  it('deletes with 204, and 204 again once gone', async () => {
    await h.client.transactions.delete(uuidOf(1));
    await h.client.transactions.delete(uuidOf(1));
    expect(h.statuses.get('transactions.delete')).toEqual([204, 204]);
  });
});

describe('transactions.list', () => {
  it('pages {data, next_cursor} with limit and cursor', async () => {
    const pages = await allPages(h.client.transactions.list({ limit: 3 }));
    expect(h.lastStatus('transactions.list')).toBe(200);
    expect(pages.map((p) => p.items.length)).toEqual([3, 3, 3, 1]);
    expect(pages.at(-1)?.nextCursor).toBeNull();
    const ids = pages.flatMap((p) => p.items.map((t) => t.transaction_id));
    expect(new Set(ids).size).toBe(10);
    const raw = await h.raw('GET', '/v1/transactions?limit=1');
    expect(Object.keys(raw.body as object).sort()).toEqual(['data', 'next_cursor']);
    expect(TransactionPage.parse(raw.body).items).toHaveLength(1);
  });

  it('filters by store_id, product_id, from_date and to_date, and updated_after', async () => {
    const rows = async (q: TransactionListQuery) =>
      (await allPages(h.client.transactions.list(q))).flatMap((p) => p.items.map((t) => t.transaction_id)).sort();
    expect(await rows({ store_id: 'store-odd' })).toEqual(['T-1', 'T-3', 'T-5', 'T-7']);
    expect(await rows({ product_id: 'I-1' })).toEqual(['T-1', 'T-22', 'T-4', 'T-7']);
    expect(await rows({ from_date: '2026-11-03T00:00:00Z', to_date: '2026-11-04T23:59:59Z' })).toEqual(['T-2', 'T-20', 'T-3']);
    await clock.advance(1000);
    const latest = await h.client.transactions.upsert(uuidOf(5), tx(200));
    expect(await rows({ updated_after: latest.updated_at ?? undefined })).toEqual(['T-200']);
  });

  it('refuses limit 10001 locally; 10000 is accepted', async () => {
    await expect(errorOf(() => h.client.transactions.list({ limit: 10_001 }))).resolves.toMatchObject({ code: API_ERROR_CODES.localValidation });
    const page = (await allPages(h.client.transactions.list({ limit: 10_000 })))[0];
    expect(page?.nextCursor).toBeNull();
  });
});

describe('transactions.import', () => {
  it('answers 202; the job completes and the rows are listed like bulk rows', async () => {
    const csv = 'transaction_id,item_id,transaction_timestamp,quantity,price,is_promo\nC-1,I-9,2026-11-20T08:00:00Z,1,2.00,yes\nC-2,I-9,bad,1,2.00,no\n';
    const handle = await h.client.transactions.import(await h.csv('transactions.csv', csv));
    expect(h.lastStatus('transactions.import')).toBe(202);
    const job = await pollJob(h, handle.job_id);
    expect(job).toMatchObject({ status: 'completed', job_type: 'import_transactions', rows_total: 2, rows_ok: 1, rows_failed: 1 });
    expect(job.errors).toEqual([expect.objectContaining({ line: 3, code: 'validation_error' })]);
    const imported = (await allPages(h.client.transactions.list({ product_id: 'I-9' }))).flatMap((p) => p.items);
    expect(imported).toEqual([expect.objectContaining({ transaction_id: 'C-1', is_promo: true, price: '2.00' })]);
  });

  it('refuses a file that is not UTF-8 with 422 on body.file', async () => {
    const path = await h.csv('latin1.csv', Buffer.from('transaction_id,item_id\nT-\xe9,I\n', 'latin1'));
    const error = await errorOf(() => h.client.transactions.import(path));
    expect(error).toMatchObject({ code: API_ERROR_CODES.validation, status: 422 });
    expect(error.detail?.[0]).toMatchObject({ loc: ['body', 'file'], type: 'value_error' });
  });
});

ownedOperationsTest(() => h);
