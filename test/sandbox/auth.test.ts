import { describe, expect, it } from 'vitest';
import { API_KEY_PREFIX, AuthVerifyResult } from '../../src/api/schemas/index.ts';
import { expectDetailBody, sandboxForFile } from './support.ts';

const h = sandboxForFile();

describe('bearer authentication', () => {
  it('verifies a valid key', async () => {
    const res = await h.client.get('/v1/auth/verify');
    expect(res.status).toBe(200);
    const body = AuthVerifyResult.parse(res.body);
    expect(body.ok).toBe(true);
    expect(h.sandbox.apiKey.startsWith(API_KEY_PREFIX)).toBe(true);
  });

  it('answers 401 with a detail body for missing, malformed and unknown keys, and counts them', async () => {
    const before = h.sandbox.control.state({ keys: false }).auth.rejected;
    const missing = await h.client.get('/v1/auth/verify', { key: null });
    const basic = await h.client.get('/v1/auth/verify', { key: null, headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    const noPrefix = await h.client.get('/v1/auth/verify', { key: 'live_abc' });
    const unknown = await h.client.get('/v1/auth/verify', { key: `${API_KEY_PREFIX}not-the-key` });
    for (const res of [missing, basic, noPrefix, unknown]) {
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expectDetailBody(res.body);
    }
    const after = h.sandbox.control.state({ keys: false }).auth.rejected;
    expect(after.missing - before.missing).toBe(1);
    expect(after.malformed - before.malformed).toBe(2);
    expect(after.unknown - before.unknown).toBe(1);
  });

  it('rejects a rotated key at once and accepts the new one', async () => {
    const old = h.sandbox.apiKey;
    const before = AuthVerifyResult.parse((await h.client.get('/v1/auth/verify')).body);
    const fresh = h.sandbox.control.rotateKey();
    expect(fresh).not.toBe(old);
    expect(h.sandbox.apiKey).toBe(fresh);
    const rejected = await h.client.get('/v1/products', { key: old });
    expect(rejected.status).toBe(401);
    const after = AuthVerifyResult.parse((await h.client.get('/v1/auth/verify')).body);
    expect(after.api_key_id).not.toBe(before.api_key_id);
    expect(after.user_id).toBe(before.user_id);
    expect(h.sandbox.control.state({ keys: false }).auth.rejected.rotated).toBe(1);
  });

  it('answers 403 for resources denied to the key, by path prefix or by method and path', async () => {
    h.sandbox.control.setDenied(['/v1/grids', 'POST /v1/transactions/bulk']);
    try {
      expect((await h.client.get('/v1/grids')).status).toBe(403);
      const forbidden = await h.client.post('/v1/transactions/bulk', { items: [] });
      expect(forbidden.status).toBe(403);
      expectDetailBody(forbidden.body);
      expect((await h.client.get('/v1/transactions')).status).toBe(200);
      expect((await h.client.get('/v1/grids_and_more', {})).status).toBe(404);
      expect(h.sandbox.control.state({ keys: false }).requests.forbidden).toBe(2);
    } finally {
      h.sandbox.control.setDenied([]);
    }
    expect((await h.client.get('/v1/grids')).status).toBe(200);
  });

  it('serves the control plane without a key', async () => {
    const res = await h.client.get('/_sandbox/state?keys=false', { key: null });
    expect(res.status).toBe(200);
  });
});
