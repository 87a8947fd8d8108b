/**
 * Transport edge cases through nock (which intercepts undici): each retry row, Retry-After in both forms, a
 * connection reset on an idempotent call versus the non-idempotent create, 422 parsing, pagination, multipart.
 * Time is a ManualClock: no test sleeps.
 */
import nock from 'nock';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { API_ERROR_CODES, ApiError } from '../../src/api/errors.ts';
import { ManualClock, drive } from '../support/manual-clock.ts';

const BASE = 'https://api.pricing.test';
const KEY = 'svc_live_transport_test_key_0123456789';
const dispatcher = new Agent({ allowH2: false });

function makeClient(clock = new ManualClock(), baseUrl = BASE) {
  const events: string[] = [];
  const client = new ApiClient({
    baseUrl,
    apiKey: KEY,
    dispatcher,
    clock,
    random: () => 0,
    hooks: {
      onRetry: (e) => events.push(`retry ${e.operation} #${e.attempt} ${e.delayMs}ms`),
      onRateLimited: (e) => events.push(`429 wait ${e.waitMs}ms`),
    },
  });
  return { client, clock, events };
}

const verifyBody = { ok: true, user_id: '0d6f4a2b-1c3e-4b5a-8f9e-2a1b3c4d5e6f', api_key_id: '1d6f4a2b-1c3e-4b5a-8f9e-2a1b3c4d5e6f' };
const json = { 'content-type': 'application/json' };

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());
afterAll(async () => {
  nock.enableNetConnect();
  await dispatcher.close();
});

describe('retries', () => {
  it('retries an idempotent call on 5xx with 1 s, 2 s, 4 s backoff and succeeds', async () => {
    const scope = nock(BASE).get('/v1/auth/verify').reply(500).get('/v1/auth/verify').reply(502).get('/v1/auth/verify').reply(503)
      .get('/v1/auth/verify').reply(200, verifyBody, json);
    const { client, clock, events } = makeClient();
    await expect(drive(clock, client.auth.verify())).resolves.toMatchObject({ ok: true });
    expect(clock.sleeps).toEqual([1000, 2000, 4000]);
    expect(events).toHaveLength(3);
    scope.done();
  });

  it('gives up after 5 attempts with a retryable server error', async () => {
    nock(BASE).post('/v1/products/bulk').times(5).reply(503, { detail: 'maintenance' }, json);
    const { client, clock } = makeClient();
    const error = await drive(clock, client.products.bulk([{ item_id: 'A', sku: 'A' }])).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: API_ERROR_CODES.serverError, status: 503, retryable: true });
    expect(clock.sleeps).toEqual([1000, 2000, 4000, 8000]);
    expect(nock.isDone()).toBe(true);
  });

  it('does not retry the create on a 500 either', async () => {
    nock(BASE).post('/v1/competitor_prices').reply(500);
    const { client, clock } = makeClient();
    const body = { competitor_name: 'C', observed_at: '2026-11-01T10:00:00Z', regular_price: '1', effective_price: '1' };
    await expect(drive(clock, client.competitorPrices.create(body))).rejects.toMatchObject({ code: API_ERROR_CODES.outcomeUnknown });
    expect(nock.isDone()).toBe(true);
  });

  it.each([400, 403, 404, 409, 422])('never retries a %i', async (status) => {
    nock(BASE).patch('/v1/products/p1').reply(status, { detail: [] }, json);
    const { client, clock } = makeClient();
    await expect(drive(clock, client.products.patch('p1', { brand: 'X' }))).rejects.toMatchObject({ status, retryable: false });
    expect(clock.sleeps).toEqual([]);
  });

  it('never retries a 401 and says the key was rejected', async () => {
    nock(BASE).get('/v1/auth/verify').reply(401, { detail: 'invalid key' }, json);
    const { client, clock } = makeClient();
    const error = await drive(clock, client.auth.verify()).catch((e: unknown) => e as ApiError);
    expect(error).toMatchObject({ code: API_ERROR_CODES.keyRejected, status: 401, retryable: false });
    expect((error as Error).message).toMatch(/rejected the key.*rotated, revoked/);
    expect(nock.isDone()).toBe(true);
  });
});

describe('429 and Retry-After', () => {
  it('waits Retry-After seconds up to api.max_retry_after (15 min by default), without using an attempt', async () => {
    nock(BASE).get('/v1/auth/verify').reply(429, '', { 'retry-after': '120' }).get('/v1/auth/verify').reply(429, '', { 'retry-after': '3600' })
      .get('/v1/auth/verify').reply(200, verifyBody, json);
    const { client, clock } = makeClient();
    const started = clock.now();
    await expect(drive(clock, client.auth.verify())).resolves.toMatchObject({ ok: true });
    // 120 s, then the hour capped at 15 min (issue 27, point 2); drive() moves the clock a minute at a time.
    expect(clock.now() - started).toBeGreaterThanOrEqual(1_020_000);
    expect(clock.now() - started).toBeLessThan(1_020_000 + 120_000);
  });

  it('waits until an HTTP-date Retry-After', async () => {
    const clock = new ManualClock(Date.parse('2026-11-22T10:00:00Z'));
    nock(BASE).get('/v1/auth/verify').reply(429, '', { 'retry-after': 'Sun, 22 Nov 2026 10:05:00 GMT' })
      .get('/v1/auth/verify').reply(200, verifyBody, json);
    const { client } = makeClient(clock);
    await drive(clock, client.auth.verify());
    expect(clock.now()).toBeGreaterThanOrEqual(Date.parse('2026-11-22T10:05:00Z'));
  });

  it('holds every concurrent caller until the window has passed', async () => {
    const clock = new ManualClock();
    const { client } = makeClient(clock);
    const seen: number[] = [];
    nock(BASE).get('/v1/auth/verify').reply(429, '', { 'retry-after': '30' });
    nock(BASE).get('/v1/auth/verify').times(3).reply(() => {
      seen.push(clock.now());
      return [200, verifyBody, json];
    });
    const opened = clock.now() + 30_000;
    const first = client.auth.verify();
    await clock.untilWaiting(1);
    // Two more callers arrive while the gate is closed: they must not send anything yet.
    const others = [client.auth.verify(), client.auth.verify()];
    await clock.untilWaiting(3);
    expect(seen).toEqual([]);
    await clock.advance(30_000);
    await Promise.all([first, ...others]);
    expect(seen).toHaveLength(3);
    expect(seen.every((t) => t >= opened)).toBe(true);
  });
});

describe('responses', () => {
  it('parses a 422 into loc/msg/type detail', async () => {
    const detail = [{ loc: ['body', 'items', 3, 'current_price'], msg: 'Input should be a valid decimal', type: 'decimal_parsing' }];
    nock(BASE).post('/v1/product_store').reply(422, { detail }, json);
    const { client } = makeClient();
    const error = await client.productStore.upsert({ item_id: 'A', store_id: 'S', current_price: '1' }).catch((e: unknown) => e as ApiError);
    expect(error).toMatchObject({ code: API_ERROR_CODES.validation, status: 422, detail });
    expect(error.message).toContain('body.items.3.current_price');
  });

  it('pages through three pages until next_cursor is null', async () => {
    const tx = (id: string) => ({ transaction_id: id, timestamp: '2026-11-01T10:00:00Z', updated_at: '2026-11-02T10:00:00Z' });
    nock(BASE)
      .get('/v1/transactions').query({ limit: '2', store_id: 'S1' }).reply(200, { data: [tx('1'), tx('2')], next_cursor: 'c1' }, json)
      .get('/v1/transactions').query({ limit: '2', store_id: 'S1', cursor: 'c1' }).reply(200, { data: [tx('3'), tx('4')], next_cursor: 'c2' }, json)
      .get('/v1/transactions').query({ limit: '2', store_id: 'S1', cursor: 'c2' }).reply(200, { data: [tx('5')], next_cursor: null }, { ...json, date: 'Sun, 22 Nov 2026 10:00:00 GMT' });
    const { client } = makeClient();
    const ids: string[] = [];
    let lastDate: Date | null = null;
    for await (const page of client.transactions.list({ limit: 2, store_id: 'S1' })) {
      ids.push(...page.items.map((t) => t.transaction_id));
      lastDate = page.serverDate;
    }
    expect(ids).toEqual(['1', '2', '3', '4', '5']);
    expect(lastDate?.toISOString()).toBe('2026-11-22T10:00:00.000Z');
  });

  it('refuses a limit out of range before sending anything', async () => {
    const { client } = makeClient();
    expect(() => client.transactions.list({ limit: 10_001 })).toThrow(/limit must be an integer from 1 to 10000/);
    expect(() => client.approvedPrices.list({ limit: 501 })).toThrow(/from 1 to 500/);
    await expect(client.approvedPrices.acknowledge(Array.from({ length: 501 }, (_, i) => i))).rejects.toThrow(/1 to 500 ids/);
  });

  it('rejects a response that breaks the contract', async () => {
    nock(BASE).get('/v1/auth/verify').reply(200, { ok: true }, json);
    const { client } = makeClient();
    await expect(client.auth.verify()).rejects.toMatchObject({ code: API_ERROR_CODES.badResponse });
  });
});
