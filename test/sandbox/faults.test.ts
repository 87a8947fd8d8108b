import { describe, expect, it } from 'vitest';
import { open, sandboxForFile } from './support.ts';

const h = sandboxForFile();

const rows = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    transaction_id: `T-${from + i}`,
    item_id: 'I',
    transaction_timestamp: '2026-11-01T00:00:00Z',
  }));
const count = () => h.sandbox.control.state({ keys: false }).transactions.count;

describe('faults', () => {
  it('drops the connection before the write is committed: nothing is stored', async () => {
    h.sandbox.control.setFaults({ drop_before_commit: 1, paths: ['POST /v1/transactions/bulk'] });
    await expect(h.client.post('/v1/transactions/bulk', { items: rows(0, 5) })).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
    expect(count()).toBe(0);
    expect((await h.client.get('/v1/transactions')).status).toBe(200); // other routes are not targeted
    h.sandbox.control.setFaults(null);
    expect((await h.client.post('/v1/transactions/bulk', { items: rows(0, 5) })).status).toBe(200);
    expect(count()).toBe(5);
  });

  it('drops the connection after the write is committed: the rows are stored, the client never hears', async () => {
    h.sandbox.control.setFaults({ drop_after_commit: 1 });
    await expect(h.client.post('/v1/transactions/bulk', { items: rows(5, 5) })).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
    expect(count()).toBe(10);
    h.sandbox.control.setFaults(null);
    // The retry of the same batch is idempotent: no row twice.
    await h.client.post('/v1/transactions/bulk', { items: rows(5, 5) });
    expect(count()).toBe(10);
    expect(h.sandbox.control.state().faults.injected).toMatchObject({ drop_before_commit: 1, drop_after_commit: 1 });
  });

  it.each([
    ['error_500', 500],
    ['error_502', 502],
    ['error_503', 503],
  ] as const)('answers %s without running the handler', async (kind, status) => {
    h.sandbox.control.setFaults({ [kind]: 1 });
    const res = await h.client.post('/v1/transactions/bulk', { items: rows(100, 1) });
    h.sandbox.control.setFaults(null);
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ detail: expect.any(String) as unknown });
    expect(count()).toBe(10);
  });

  it('adds latency through the injected clock', async () => {
    h.sandbox.control.setFaults({ latency_ms: 30_000 });
    let settled = false;
    const pending = h.client.get('/v1/auth/verify').then((res) => {
      settled = true;
      return res;
    });
    await h.clock.untilWaiting(1);
    await h.clock.advance(29_999);
    expect(settled).toBe(false);
    await h.clock.advance(1);
    expect((await pending).status).toBe(200);
    h.sandbox.control.setFaults(null);
  });

  it('repeats the same faults for the same seed and the same requests', async () => {
    const run = async (): Promise<number[]> => {
      const other = await open({ seed: 42 });
      try {
        other.sandbox.control.setFaults({ error_500: 0.3, error_503: 0.2 });
        const statuses: number[] = [];
        for (let i = 0; i < 30; i += 1) statuses.push((await other.client.get('/v1/auth/verify')).status);
        return statuses;
      } finally {
        await other.close();
      }
    };
    const [a, b] = [await run(), await run()];
    expect(a).toEqual(b);
    expect(new Set(a)).toEqual(new Set([200, 500, 503]));
  });

  it('refuses probabilities that add up to more than 1', () => {
    expect(() => h.sandbox.control.setFaults({ error_500: 0.6, error_502: 0.6 })).toThrow();
  });
});
