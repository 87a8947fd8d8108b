import { describe, expect, it } from 'vitest';
import { expectDetailBody, sandboxForFile } from './support.ts';

const h = sandboxForFile();

const verify = () => h.client.get('/v1/auth/verify');

describe('rate limit', () => {
  it('answers 429 with Retry-After in seconds and records requests that come back too early', async () => {
    h.sandbox.control.setRateLimit({ requests: 2, window_seconds: 10 });
    expect((await verify()).status).toBe(200);
    await h.clock.advance(3000);
    expect((await verify()).status).toBe(200);
    const limited = await verify();
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('7');
    expectDetailBody(limited.body);
    expect(h.sandbox.control.state().rate_limit.early_requests).toEqual([]);

    await h.clock.advance(6999);
    const early = await h.client.get('/v1/transactions');
    expect(early.status).toBe(429);
    expect(early.headers['retry-after']).toBe('1');
    expect(h.sandbox.control.state().rate_limit.early_requests).toEqual([
      { at: new Date(h.clock.now()).toISOString(), method: 'GET', path: '/v1/transactions', retry_after_until: new Date(h.clock.now() + 1).toISOString() },
    ]);

    await h.clock.advance(1);
    expect((await verify()).status).toBe(200);
    expect(h.sandbox.control.state().rate_limit.limited).toBe(2);
  });

  it('can give Retry-After as an HTTP-date, rounded up to a whole second', async () => {
    h.sandbox.control.setRateLimit({ requests: 1, window_seconds: 2, retry_after_format: 'http-date' });
    await h.clock.advance(250);
    expect((await verify()).status).toBe(200);
    const limited = await verify();
    expect(limited.status).toBe(429);
    const until = Date.parse(String(limited.headers['retry-after']));
    expect(until % 1000).toBe(0);
    expect(until).toBeGreaterThanOrEqual(h.clock.now() + 2000);
    await h.clock.advance(until - h.clock.now());
    expect((await verify()).status).toBe(200);
  });

  it('counts per key: a rotated key starts a fresh window', async () => {
    h.sandbox.control.setRateLimit({ requests: 1, window_seconds: 60 });
    expect((await verify()).status).toBe(200);
    expect((await verify()).status).toBe(429);
    h.sandbox.control.rotateKey();
    expect((await verify()).status).toBe(200);
  });

  it('is off again with null, and never applies to the control plane', async () => {
    h.sandbox.control.setRateLimit({ requests: 0, window_seconds: 60 });
    expect((await verify()).status).toBe(429);
    expect((await h.client.get('/_sandbox/state?keys=false')).status).toBe(200);
    h.sandbox.control.setRateLimit(null);
    expect((await verify()).status).toBe(200);
  });
});
