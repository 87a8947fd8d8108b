import { beforeAll, describe, expect, it } from 'vitest';
import { BulkResponse, Transaction, TransactionPage } from '../../src/api/schemas/index.ts';
import { cursorParam, everyPage, firstError, sandboxForFile, uuidOf } from './support.ts';

let stores: readonly string[];
const h = sandboxForFile();
beforeAll(() => {
  stores = h.sandbox.control.stores;
});

const tx = (n: number, extra: Record<string, unknown> = {}) => ({
  transaction_id: `T-${n}`,
  item_id: `I-${n % 3}`,
  transaction_timestamp: `2026-11-0${1 + (n % 5)}T10:00:00Z`,
  store_id: stores[n % 2],
  quantity: 2,
  price: '1.50',
  revenue: '3.00',
  currency: 'EUR',
  is_promo: n % 2 === 0,
  ...extra,
});

async function listAll(query: string): Promise<Transaction[]> {
  const pages = await everyPage(async (cursor) => TransactionPage.parse((await h.client.get(`/v1/transactions?limit=3${query}${cursorParam(cursor)}`)).body));
  return pages.flatMap((page) => page.items);
}

describe('transactions', () => {
  it('bulk is idempotent per transaction_id; numbers for decimals come back as strings', async () => {
    const items = Array.from({ length: 10 }, (_, n) => tx(n, n === 0 ? { product_id: 'PRD-0' } : {}));
    const first = BulkResponse.parse((await h.client.post('/v1/transactions/bulk', { items })).body);
    expect(first.results.every((r) => r.ok)).toBe(true);
    const again = BulkResponse.parse((await h.client.post('/v1/transactions/bulk', { items })).body);
    expect(again.results.map((r) => r.id)).toEqual(first.results.map((r) => r.id));
    expect(h.sandbox.control.state().transactions.count).toBe(10);
    const all = await listAll('');
    expect(all).toHaveLength(10);
    const t0 = all.find((t) => t.transaction_id === 'T-0')!;
    expect(t0).toMatchObject({ product_id: 'PRD-0', item_id: 'I-0', timestamp: '2026-11-01T10:00:00Z', quantity: '2', is_promo: true });
    expect(all.find((t) => t.transaction_id === 'T-1')!.product_id).toBe('I-1'); // product_id falls back to item_id
  });

  it('reports malformed rows per row, with the field in the message', async () => {
    const res = BulkResponse.parse(
      (
        await h.client.post('/v1/transactions/bulk', {
          items: [tx(100, { transaction_timestamp: '2026-11-01 10:00' }), tx(101, { price: '1,50' }), { item_id: 'x' }, tx(102)],
        })
      ).body,
    );
    expect(res.results.map((r) => r.ok)).toEqual([false, false, false, true]);
    expect(res.results[0]!.message).toBe('body.items.0.transaction_timestamp: Input should be a valid datetime');
    expect(res.results[1]!.message).toBe('body.items.1.price: Input should be a valid decimal');
  });

  it('filters by from_date, to_date (inclusive), product_id and store_id', async () => {
    const window = await listAll('&from_date=2026-11-02T10:00:00Z&to_date=2026-11-03T10:00:00Z');
    expect(window.map((t) => t.timestamp).every((ts) => ts >= '2026-11-02T10:00:00Z' && ts <= '2026-11-03T10:00:00Z')).toBe(true);
    expect(window.length).toBeGreaterThan(0);
    const product = await listAll('&product_id=I-1');
    expect(product.length).toBeGreaterThan(0);
    expect(product.every((t) => t.product_id === 'I-1')).toBe(true);
    const store = await listAll(`&store_id=${stores[1]}`);
    expect(store.every((t) => t.store_id === stores[1])).toBe(true);
    const bad = await h.client.get('/v1/transactions?from_date=2026-11-02');
    expect(firstError(bad.body)).toMatchObject({ loc: ['query', 'from_date'], type: 'datetime_parsing' });
  });

  it('paging is stable under concurrent inserts and an updated row moves to the end', async () => {
    const before = await listAll('');
    const page1 = TransactionPage.parse((await h.client.get('/v1/transactions?limit=4')).body);
    await h.client.post('/v1/transactions/bulk', { items: [tx(200), tx(201)] });
    await h.client.patch(`/v1/transactions/${page1.items[0]!.id as string}`, { quantity: '5' });
    let cursor = page1.next_cursor;
    const rest: Transaction[] = [];
    while (cursor !== null) {
      const page = TransactionPage.parse((await h.client.get(`/v1/transactions?limit=4&cursor=${cursor}`)).body);
      rest.push(...page.items);
      cursor = page.next_cursor;
    }
    const ids = [...page1.items, ...rest].map((t) => t.transaction_id);
    for (const t of before) expect(ids).toContain(t.transaction_id);
    expect(ids.slice(-3)).toEqual(['T-200', 'T-201', page1.items[0]!.transaction_id]);
  });

  it('single upsert on the path id, PATCH and DELETE', async () => {
    const id = uuidOf(5);
    const created = await h.client.post(`/v1/transactions/${id}`, tx(300));
    expect(created.status).toBe(201);
    expect(Transaction.parse(created.body)).toMatchObject({ id, transaction_id: 'T-300' });
    const bad = await h.client.post(`/v1/transactions/${id}`, tx(300, { transaction_timestamp: 'soon' }));
    expect(bad.status).toBe(422);
    expect(firstError(bad.body)).toMatchObject({ loc: ['body', 'transaction_timestamp'], type: 'datetime_parsing' });
    const patched = await h.client.patch(`/v1/transactions/${id}`, { revenue: 9.5, is_promo: null });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ revenue: '9.5', is_promo: null, price: '1.50' });
    expect((await h.client.delete(`/v1/transactions/${id}`)).status).toBe(204);
    expect((await h.client.delete(`/v1/transactions/${id}`)).status).toBe(204);
    expect((await h.client.patch(`/v1/transactions/${id}`, { revenue: '1' })).status).toBe(404);
  });

  it('keeps every field exactly as sent (any Unicode, lone surrogates) through re-sends, key changes, deletes and re-creation', async () => {
    const ids = ['T-é-1', 'T-\ud800-2', 'T-😀-3', `T-${'x'.repeat(251)}`];
    const row = (transactionId: string, n: number) =>
      tx(500 + n, { transaction_id: transactionId, product_id: 'UNICODE', item_id: `I-ü-${n}`, transaction_timestamp: `2026-11-0${1 + n}T10:00:00.${n}23+02:00` });
    const items = ids.map((id, n) => row(id, n));
    const first = BulkResponse.parse((await h.client.post('/v1/transactions/bulk', { items })).body);
    expect(first.results.every((r) => r.ok)).toBe(true);
    const again = BulkResponse.parse((await h.client.post('/v1/transactions/bulk', { items })).body);
    expect(again.results.map((r) => r.id)).toEqual(first.results.map((r) => r.id));
    const listed = await listAll('&product_id=UNICODE');
    expect(listed.map((t) => [t.transaction_id, t.item_id, t.timestamp])).toEqual(
      items.map((i) => [i.transaction_id, i.item_id, i.transaction_timestamp]),
    );

    // Moving a row to another key frees the old one: a bulk row with the old key is a new record.
    const [moved, deleted] = [first.results[1]!.id as string, first.results[2]!.id as string];
    expect((await h.client.patch(`/v1/transactions/${moved}`, { transaction_id: 'T-\udfff-moved' })).status).toBe(200);
    expect((await h.client.delete(`/v1/transactions/${deleted}`)).status).toBe(204);
    const resent = BulkResponse.parse(
      (await h.client.post('/v1/transactions/bulk', { items: [row('T-\ud800-2', 5), row('T-\udfff-moved', 6), row('T-😀-3', 7)] })).body,
    );
    expect(resent.results.map((r) => r.ok)).toEqual([true, true, true]);
    expect(resent.results[0]!.id).not.toBe(moved);
    expect(resent.results[1]!.id).toBe(moved);
    expect(resent.results[2]!.id).not.toBe(deleted);
    const after = await listAll('&product_id=UNICODE');
    expect(Object.fromEntries(after.map((t) => [t.transaction_id, [t.id, t.timestamp]]))).toEqual({
      'T-é-1': [first.results[0]!.id, '2026-11-01T10:00:00.023+02:00'],
      [ids[3]!]: [first.results[3]!.id, '2026-11-04T10:00:00.323+02:00'],
      'T-\ud800-2': [resent.results[0]!.id, '2026-11-06T10:00:00.523+02:00'],
      'T-\udfff-moved': [moved, '2026-11-07T10:00:00.623+02:00'],
      'T-😀-3': [resent.results[2]!.id, '2026-11-08T10:00:00.723+02:00'],
    });
    const single = TransactionPage.parse((await h.client.get('/v1/transactions?product_id=UNICODE&limit=1')).body);
    expect(single.items.map((t) => t.transaction_id)).toEqual(['T-é-1']);
  });

  it('keeps updated_after inclusive for incremental sync', async () => {
    await h.clock.advance(1000);
    const mark = new Date(h.clock.now()).toISOString();
    await h.client.post('/v1/transactions/bulk', { items: [tx(400)] });
    const recent = await listAll(`&updated_after=${mark}`);
    expect(recent.map((t) => t.transaction_id)).toEqual(['T-400']);
    expect(recent[0]!.updated_at).toBe(mark);
  });
});
