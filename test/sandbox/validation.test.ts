/** 422 bodies: exactly HTTPValidationError, loc with array indices, the spec's machine types. */
import { describe, expect, it } from 'vitest';
import { HTTPValidationError } from '../../src/api/schemas/index.ts';
import { sandboxForFile, uuidOf } from './support.ts';

const h = sandboxForFile();

async function errorsOf(method: string, path: string, json: unknown) {
  const res = await h.client.call(method, path, { json });
  expect(res.status).toBe(422);
  const body = HTTPValidationError.parse(res.body);
  for (const e of body.detail) expect(Object.keys(e).sort()).toEqual(expect.arrayContaining(['loc', 'msg', 'type']));
  return body.detail.map((e) => ({ loc: e.loc, type: e.type }));
}

describe('422 shapes', () => {
  it('missing', async () => {
    expect(await errorsOf('POST', `/v1/transactions/${uuidOf(1)}`, { transaction_id: 'T', transaction_timestamp: '2026-11-01T00:00:00Z' })).toEqual([
      { loc: ['body', 'item_id'], type: 'missing' },
    ]);
  });

  it('string_too_long', async () => {
    expect(await errorsOf('POST', `/v1/products/${uuidOf(1)}`, { item_id: 'x'.repeat(256), sku: 's' })).toEqual([
      { loc: ['body', 'item_id'], type: 'string_too_long' },
    ]);
  });

  it('datetime_parsing and decimal_parsing', async () => {
    expect(
      await errorsOf('POST', `/v1/transactions/${uuidOf(1)}`, {
        transaction_id: 'T',
        item_id: 'I',
        transaction_timestamp: '20.11.2026',
        price: 'abc',
      }),
    ).toEqual([
      { loc: ['body', 'transaction_timestamp'], type: 'datetime_parsing' },
      { loc: ['body', 'price'], type: 'decimal_parsing' },
    ]);
  });

  it('value_error for a store_id referencing an unknown store', async () => {
    expect(await errorsOf('POST', '/v1/product_store', { item_id: 'I', store_id: 'S-404', current_price: '1' })).toEqual([
      { loc: ['body', 'store_id'], type: 'value_error' },
    ]);
  });

  it('loc with array indices and nested objects', async () => {
    expect(await errorsOf('POST', '/v1/approved_prices/acknowledge', { approval_ids: [1, 'two', 3] })).toEqual([
      { loc: ['body', 'approval_ids', 1], type: expect.any(String) as unknown },
    ]);
    expect(
      await errorsOf('POST', '/v1/approved_prices/deliveries', { request_id: uuidOf(1), filters: { store_id: 'not-a-uuid', extra: 1 } }),
    ).toEqual([
      { loc: ['body', 'filters', 'store_id'], type: 'uuid_parsing' },
      { loc: ['body', 'filters', 'extra'], type: 'extra_forbidden' },
    ]);
  });

  it('extra_forbidden for unknown fields of strict records (not for products: custom columns)', async () => {
    expect(await errorsOf('POST', '/v1/product_store', { item_id: 'I', store_id: h.sandbox.control.stores[0], current_price: '1', colour: 'red' })).toEqual([
      { loc: ['body', 'colour'], type: 'extra_forbidden' },
    ]);
  });

  it('a missing body is reported on loc [body]', async () => {
    const res = await h.client.call('POST', `/v1/products/${uuidOf(1)}`);
    expect(res.status).toBe(422);
    expect(HTTPValidationError.parse(res.body).detail[0]).toMatchObject({ loc: ['body'], type: 'missing' });
  });
});
