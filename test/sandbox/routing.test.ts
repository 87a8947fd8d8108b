import { describe, expect, it } from 'vitest';
import { expectDetailBody, open, sandboxForFile } from './support.ts';

const h = sandboxForFile();

describe('routing', () => {
  it('answers 404 for an unknown route', async () => {
    const res = await h.client.get('/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'Not Found' });
  });

  it('answers 405 with Allow for a known path and a wrong method', async () => {
    const res = await h.client.call('PUT', '/v1/products');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET');
    expect(res.body).toEqual({ detail: 'Method Not Allowed' });
    // The spec has no single-product read: the path exists for POST, PATCH and DELETE only.
    const read = await h.client.get('/v1/products/00000000-0000-4000-8000-000000000001');
    expect(read.status).toBe(405);
    expect(String(read.headers.allow).split(', ').sort()).toEqual(['DELETE', 'PATCH', 'POST']);
  });

  it('answers the removed product-variant endpoints like a removed endpoint, and counts the calls', async () => {
    for (const [method, path] of [
      ['GET', '/v1/product_variants'],
      ['POST', '/v1/product_variants/bulk'],
      ['PATCH', '/v1/product_variants/00000000-0000-4000-8000-000000000001'],
    ] as const) {
      const res = await h.client.call(method, path, { json: { items: [] } });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Not Found' });
    }
    expect(h.sandbox.control.state({ keys: false }).requests.removed_endpoint).toBe(3);
  });

  it('answers 422 for a body that is not JSON', async () => {
    const res = await h.client.call('POST', '/v1/transactions/bulk', { body: '{"items": [', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(422);
    expect((res.body as { detail: { type: string; loc: unknown[] }[] }).detail[0]).toMatchObject({ type: 'json_invalid', loc: ['body'] });
  });

  it('answers 413 for a body over the size limit', async () => {
    const small = await open({ maxBodyBytes: 1024 });
    try {
      const res = await small.client.post('/v1/transactions/bulk', { items: [{ pad: 'x'.repeat(2000) }] });
      expect(res.status).toBe(413);
      expectDetailBody(res.body);
    } finally {
      await small.close();
    }
  });

  it('counts no internal error', () => {
    expect(h.sandbox.control.state({ keys: false }).requests.internal_errors).toBe(0);
  });
});
