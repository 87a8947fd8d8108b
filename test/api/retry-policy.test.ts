import { describe, expect, it } from 'vitest';
import { OPERATIONS, retryClassOf, type OperationName, type RetryClass } from '../../src/api/operations.ts';
import { backoffDelay, parseRetryAfter, shouldRetry } from '../../src/api/retry-policy.ts';

/** The spec's retry rules, one row per operation: the table the client must implement. */
const EXPECTED: Record<OperationName, RetryClass> = {
  'auth.verify': 'idempotent',
  'products.upsert': 'idempotent',
  'products.patch': 'idempotent',
  'products.delete': 'idempotent',
  'products.bulk': 'idempotent',
  'products.list': 'idempotent',
  'products.import': 'upload',
  'productStore.list': 'idempotent',
  'productStore.upsert': 'idempotent',
  'productStore.bulk': 'idempotent',
  'productStore.get': 'idempotent',
  'productStore.patch': 'idempotent',
  'productStore.delete': 'idempotent',
  'productStore.import': 'upload',
  'transactions.bulk': 'idempotent',
  'transactions.upsert': 'idempotent',
  'transactions.patch': 'idempotent',
  'transactions.delete': 'idempotent',
  'transactions.list': 'idempotent',
  'transactions.import': 'upload',
  'competitorPrices.create': 'unsafe',
  'competitorPrices.bulk': 'idempotent',
  'competitorPrices.patch': 'idempotent',
  'competitorPrices.delete': 'idempotent',
  'competitorPrices.list': 'idempotent',
  'competitorPrices.import': 'upload',
  'jobs.get': 'idempotent',
  'grids.list': 'idempotent',
  'grids.rows': 'idempotent',
  'approvedPrices.list': 'unsafe',
  'approvedPrices.deliveries': 'idempotent',
  'approvedPrices.acknowledge': 'idempotent',
  'transactionExports.cancel': 'idempotent',
};

describe('operation table', () => {
  it('has the 33 operations of the spec and no product_variants', () => {
    expect(Object.keys(OPERATIONS)).toHaveLength(33);
    expect(Object.values(OPERATIONS).some((op) => op.path.includes('variant'))).toBe(false);
  });

  it.each(Object.entries(EXPECTED))('%s is %s', (operation, retry) => {
    expect(retryClassOf(operation as OperationName)).toBe(retry);
  });

  it('a history read of approved prices is read-only and may be retried', () => {
    expect(retryClassOf('approvedPrices.list', { history: true })).toBe('idempotent');
    expect(retryClassOf('approvedPrices.list', { history: false })).toBe('unsafe');
  });
});

describe('shouldRetry', () => {
  const rows: [RetryClass, Parameters<typeof shouldRetry>[1], number, boolean][] = [
    ['idempotent', { kind: 'status', status: 500 }, 1, true],
    ['idempotent', { kind: 'status', status: 503 }, 4, true],
    ['idempotent', { kind: 'status', status: 503 }, 5, false], // at most 5 attempts
    ['idempotent', { kind: 'status', status: 400 }, 1, false],
    ['idempotent', { kind: 'status', status: 401 }, 1, false],
    ['idempotent', { kind: 'status', status: 404 }, 1, false],
    ['idempotent', { kind: 'status', status: 409 }, 1, false],
    ['idempotent', { kind: 'status', status: 422 }, 1, false],
    ['idempotent', { kind: 'transport', code: 'ECONNRESET' }, 1, true],
    ['idempotent', { kind: 'transport', code: 'UND_ERR_SOCKET' }, 2, true],
    ['upload', { kind: 'status', status: 502 }, 1, true],
    ['upload', { kind: 'transport', code: 'ECONNRESET' }, 1, true],
    ['unsafe', { kind: 'status', status: 500 }, 1, false],
    ['unsafe', { kind: 'transport', code: 'ECONNRESET' }, 1, false],
    ['unsafe', { kind: 'transport', code: 'UND_ERR_SOCKET' }, 1, false],
    ['unsafe', { kind: 'transport', code: 'ECONNREFUSED' }, 1, true], // provably never sent
    ['unsafe', { kind: 'transport', code: 'UND_ERR_CONNECT_TIMEOUT' }, 1, true],
  ];
  it.each(rows)('%s %j attempt %i -> %s', (retry, failure, attempt, expected) => {
    expect(shouldRetry(retry, failure, attempt)).toBe(expected);
  });
});

describe('backoffDelay', () => {
  it('starts at 1 s, doubles, caps at 30 s, jitter only upwards', () => {
    expect([1, 2, 3, 4, 5, 6].map((a) => backoffDelay(a, () => 0))).toEqual([1000, 2000, 4000, 8000, 16000, 30000]);
    expect(backoffDelay(1, () => 0.999)).toBeLessThanOrEqual(1250);
    expect(backoffDelay(10, () => 0.999)).toBe(30000);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-22T10:00:00Z');
  it('reads delta-seconds, up to the cap (api.max_retry_after, 15 min by default)', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('3600', now)).toBe(900_000);
    expect(parseRetryAfter('3600', now, 7_200_000)).toBe(3_600_000);
    expect(parseRetryAfter('3000000', now)).toBe(900_000); // 35 days (issue 27, point 2)
  });
  it('reads an HTTP date, against the response\'s own Date when it has one', () => {
    expect(parseRetryAfter('Sun, 22 Nov 2026 10:02:30 GMT', now)).toBe(150_000);
    // The server's clock a minute behind the agent's: the wait it asks for is still 150 s, not 90 s.
    expect(parseRetryAfter('Sun, 22 Nov 2026 10:01:30 GMT', now, undefined, now - 60_000)).toBe(150_000);
  });
  it('never waits less than 1 s: not for 0, a date already past, or a value that only parses as a date', () => {
    expect(parseRetryAfter('0', now)).toBe(1000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 09:00:00 GMT', now)).toBe(1000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 10:00:00 GMT', now, undefined, now + 4_000)).toBe(1000);
    for (const text of ['1.5', '-1', '2026-11-22', '10']) expect(parseRetryAfter(text, now), text).toBeGreaterThanOrEqual(1000);
    expect(parseRetryAfter('1.5', now)).toBe(1000);
    expect(parseRetryAfter('-1', now)).toBe(1000);
  });
  it('falls back to 1 s when missing or garbled', () => {
    expect(parseRetryAfter(undefined, now)).toBe(1000);
    expect(parseRetryAfter('soon', now)).toBe(1000);
  });
});
