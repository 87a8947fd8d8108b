/** The control plane over HTTP (/_sandbox/*), without the API key. */
import { describe, expect, it } from 'vitest';
import { ApprovedPrice, ExportStatus } from '../../src/api/schemas/index.ts';
import type { SandboxState } from '../../src/sandbox/index.ts';
import { firstError, open, sandboxForFile } from './support.ts';

const h = sandboxForFile();

const ctl = (method: string, path: string, json?: unknown) => h.client.call(method, `/_sandbox${path}`, { key: null, json });
const state = async (): Promise<SandboxState> => (await ctl('GET', '/state')).body as SandboxState;

describe('control plane', () => {
  it('injects approvals with stores, effective dates and product-level share', async () => {
    const stores = h.sandbox.control.stores.slice(0, 2);
    const res = await ctl('POST', '/approvals', { count: 4, stores, product_level_share: 0, effective_dates: ['2026-12-24', null] });
    expect(res.status).toBe(201);
    const items = (res.body as { items: unknown[] }).items.map((i) => ApprovedPrice.parse(i));
    expect(items.map((a) => a.id)).toEqual([1, 2, 3, 4]);
    expect(items.every((a) => stores.includes(a.store_id!))).toBe(true);
    expect(items.map((a) => a.effective_date)).toEqual(['2026-12-24', null, '2026-12-24', null]);
    const level = await ctl('POST', '/approvals', { count: 2, product_level_share: 1 });
    expect((level.body as { items: { store_id: unknown }[] }).items.map((a) => a.store_id)).toEqual([null, null]);
    expect((await ctl('POST', '/approvals', { count: 1, stores: ['nope'] })).status).toBe(422);
    expect(firstError((await ctl('POST', '/approvals', { count: 0 })).body).loc).toEqual(['body', 'count']);
  });

  it('amends and cancels approvals; 404 for an unknown id, 409 for an invalid move', async () => {
    const amended = await ctl('POST', '/approvals/1/amend', { approved_price: '4.20', reason: 'manual' });
    expect(amended.status).toBe(201);
    expect(amended.body).toMatchObject({ id: 7, predecessor_id: 1, approved_price: '4.20', amendment_reason: 'manual' });
    expect((await ctl('POST', '/approvals/1/amend', {})).status).toBe(409);
    const cancelled = await ctl('POST', '/approvals/2/cancel');
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ id: 2, cancelled_at: new Date(h.clock.now()).toISOString() });
    expect((await ctl('POST', '/approvals/2/cancel')).status).toBe(409);
    expect((await ctl('POST', '/approvals/999/cancel')).status).toBe(404);
    expect((await ctl('POST', '/approvals/x/cancel')).status).toBe(422);
    expect((await state()).approvals).toMatchObject({ total: 7, superseded: 1, cancelled: 1 });
  });

  it('rotates the key', async () => {
    const old = h.sandbox.apiKey;
    const res = await ctl('POST', '/rotate-key');
    const { api_key: key } = res.body as { api_key: string };
    expect(key).toBe(h.sandbox.apiKey);
    expect((await h.client.get('/v1/auth/verify', { key: old })).status).toBe(401);
    expect((await h.client.get('/v1/auth/verify', { key })).status).toBe(200);
  });

  it('sets and clears the rate limit, faults, access rules and the 409 detail switch', async () => {
    expect((await ctl('PUT', '/rate-limit', { requests: 0 })).body).toEqual({
      config: { requests: 0, window_seconds: 1, retry_after_format: 'seconds' },
    });
    expect((await h.client.get('/v1/grids')).status).toBe(429);
    expect((await ctl('DELETE', '/rate-limit')).status).toBe(204);
    expect((await ctl('PUT', '/faults', { error_502: 1 })).status).toBe(200);
    expect((await h.client.get('/v1/grids')).status).toBe(502);
    expect((await ctl('DELETE', '/faults')).status).toBe(204);
    expect((await ctl('PUT', '/faults', { error_502: 2 })).status).toBe(422);
    expect((await ctl('PUT', '/access', { deny: ['/v1/grids'] })).status).toBe(200);
    expect((await h.client.get('/v1/grids')).status).toBe(403);
    await ctl('PUT', '/access', { deny: [] });
    expect((await ctl('PUT', '/ack-conflicts', { include_conflicts: false })).status).toBe(200);
    expect(h.sandbox.control.world.ackConflictDetail).toBe(false);
    await ctl('PUT', '/ack-conflicts', { include_conflicts: true });
  });

  it('adds exports', async () => {
    const res = await ctl('POST', '/exports', { status: 'running' });
    expect(res.status).toBe(201);
    expect(ExportStatus.parse(res.body).status).toBe('running');
    expect((await ctl('POST', '/exports', { status: 'paused' })).status).toBe(422);
  });

  it('reports state with and without key lists, and the process memory', async () => {
    await h.client.post('/v1/products/bulk', { items: [{ item_id: 'K-1', sku: 'K-1' }] });
    expect((await state()).products).toEqual({ count: 1, deleted: 0, keys: ['K-1'] });
    expect(((await ctl('GET', '/state?keys=false')).body as SandboxState).products).toEqual({ count: 1, deleted: 0 });
    const memory = (await ctl('GET', '/memory')).body as { rss_bytes: number };
    expect(memory.rss_bytes).toBeGreaterThan(0);
  });

  it('resets to a fresh start with the same options: data, key, counters', async () => {
    const initialKey = (await open()).sandbox; // a second sandbox with the same defaults shows the initial key
    const expectedKey = initialKey.apiKey;
    await initialKey.close();
    const res = await ctl('POST', '/reset');
    expect(res.body).toEqual({ api_key: expectedKey });
    const after = await state();
    expect(after.products.count).toBe(0);
    expect(after.approvals.total).toBe(0);
    expect(after.requests.total).toBe(0);
    expect((await h.client.get('/v1/auth/verify')).status).toBe(200);
  });

  it('answers 404 and 405 on the control plane too', async () => {
    expect((await ctl('GET', '/nothing')).status).toBe(404);
    expect((await ctl('GET', '/reset')).status).toBe(405);
    expect((await ctl('PUT', '/access', { deny: ['x'.repeat(2 * 1024 * 1024)] })).status).toBe(413);
  });
});
