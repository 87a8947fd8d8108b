/**
 * Authentication and the error contract through the client: GET /v1/auth/verify, 401 for a rotated or malformed
 * key (ApiKeyRejectedError, never retried), 403 for a denied resource, and the removed /v1/product_variants/*
 * endpoints, which the client cannot call and which answer 404 like a route that never existed.
 */
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { API_ERROR_CODES, ApiKeyRejectedError } from '../../src/api/errors.ts';
import { OPERATIONS } from '../../src/api/operations.ts';
import { AuthVerifyResult } from '../../src/api/schemas/index.ts';
import { contractForFile, errorOf, ownedOperationsTest, uuidOf } from './support.ts';

const h = contractForFile('auth-errors');

describe('auth.verify', () => {
  it('confirms the key: 200 {ok, user_id, api_key_id}', async () => {
    const result = await h.client.auth.verify();
    expect(h.lastStatus('auth.verify')).toBe(200);
    const state = h.sandbox.control.state({ keys: false });
    expect(AuthVerifyResult.parse(result)).toEqual({ ok: true, user_id: state.user_id, api_key_id: state.api_key_id });
  });

  it('answers 401 for a key that is not a svc_live_ key; the error carries code and status, not the key', async () => {
    const client = new ApiClient({ baseUrl: h.sandbox.url, apiKey: 'sk_test_0123456789', dispatcher: h.dispatcher });
    const error = await errorOf(() => client.auth.verify());
    expect(error).toBeInstanceOf(ApiKeyRejectedError);
    expect(error).toMatchObject({ code: API_ERROR_CODES.keyRejected, status: 401, retryable: false, operation: 'auth.verify' });
    expect(error.message).not.toContain('sk_test_0123456789');
    expect(h.sandbox.control.state({ keys: false }).auth.rejected.malformed).toBe(1);
  });
});

describe('errors raised by the client', () => {
  it('403 for a key denied a resource: code API_FORBIDDEN, not retried', async () => {
    h.sandbox.control.setDenied(['/v1/grids']);
    try {
      const error = await errorOf(() => h.client.grids.list().next());
      expect(error).toMatchObject({ code: API_ERROR_CODES.forbidden, status: 403, operation: 'grids.list', retryable: false });
      expect(h.statuses.get('grids.list')).toEqual([403]);
    } finally {
      h.sandbox.control.setDenied([]);
    }
  });

  it('404 on a patch of an unknown id, with the status and the body kept for the caller', async () => {
    const error = await errorOf(() => h.client.products.patch(uuidOf(404), { brand: 'x' }));
    expect(error).toMatchObject({ code: API_ERROR_CODES.notFound, status: 404, retryable: false, detail: undefined });
    expect(error.body).toEqual({ detail: 'Not Found' });
  });

  it('422 with the sandbox detail (loc, msg, type) as ValidationError entries', async () => {
    const error = await errorOf(() => h.client.productStore.upsert({ item_id: 'I-1', store_id: uuidOf(1), current_price: '1.00' }));
    expect(error).toMatchObject({ code: API_ERROR_CODES.validation, status: 422, retryable: false });
    expect(error.detail).toEqual([{ loc: ['body', 'store_id'], msg: expect.stringContaining('unknown store') as unknown, type: 'value_error' }]);
    expect(error.message).toContain('body.store_id');
  });

  it('401 after the key is rotated: every call stops with API_KEY_REJECTED until the new key is set', async () => {
    const oldKey = h.sandbox.apiKey;
    const newKey = h.sandbox.control.rotateKey();
    expect(newKey).not.toBe(oldKey);
    const before = h.statuses.get('auth.verify')?.length ?? 0;
    const error = await errorOf(() => h.client.auth.verify());
    expect(error).toBeInstanceOf(ApiKeyRejectedError);
    expect(error).toMatchObject({ code: API_ERROR_CODES.keyRejected, status: 401, retryable: false });
    // One attempt only: a rejected key is never retried.
    expect(h.statuses.get('auth.verify')?.slice(before)).toEqual([401]);
    await expect(errorOf(() => h.client.products.bulk([{ item_id: 'A', sku: 'A' }]))).resolves.toMatchObject({ status: 401 });
    expect(h.sandbox.control.state({ keys: false }).auth.rejected.rotated).toBe(2);

    h.client.transport.setApiKey(newKey);
    const verified = await h.client.auth.verify();
    expect(verified.api_key_id).toBe(h.sandbox.control.state({ keys: false }).api_key_id);
  });
});

describe('removed endpoints', () => {
  it('no client operation addresses /v1/product_variants', () => {
    expect(Object.values(OPERATIONS).filter((op) => op.path.includes('product_variants'))).toEqual([]);
  });

  it('answers 404 for every /v1/product_variants path and method, bulk included', async () => {
    const calls = [
      ['GET', '/v1/product_variants'],
      ['POST', '/v1/product_variants/bulk'],
      ['POST', `/v1/product_variants/${uuidOf(1)}`],
      ['PATCH', `/v1/product_variants/${uuidOf(1)}`],
      ['DELETE', `/v1/product_variants/${uuidOf(1)}`],
      ['POST', '/v1/imports/product_variants'],
    ] as const;
    const before = h.sandbox.control.state({ keys: false }).requests.removed_endpoint;
    for (const [method, path] of calls) {
      const res = await h.raw(method, path, method === 'POST' || method === 'PATCH' ? JSON.stringify({ items: [] }) : undefined);
      expect([method, path, res.status]).toEqual([method, path, 404]);
    }
    // The last one is not under the removed prefix: a plain unknown route, also 404.
    expect(h.sandbox.control.state({ keys: false }).requests.removed_endpoint - before).toBe(calls.length - 1);
  });
});

ownedOperationsTest(() => h);
