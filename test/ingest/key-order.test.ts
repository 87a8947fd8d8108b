import { describe, expect, it } from 'vitest';
import { KeyOrder } from '../../src/ingest/file/key-order.ts';

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (e: Error) => void } {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** Resolves when `p` settles, with whether it settled before the microtask queue drained. */
async function settledNow(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void p.then(() => (settled = true));
  for (let i = 0; i < 10; i += 1) await Promise.resolve();
  return settled;
}

describe('KeyOrder', () => {
  it('lets a batch without shared keys start at once', async () => {
    const order = new KeyOrder();
    const first = deferred();
    await order.acquire(new Set(['a', 'b']), first.promise);
    expect(await settledNow(order.acquire(new Set(['c']), deferred().promise))).toBe(true);
  });

  it('holds a batch until every earlier batch sharing a key is answered, failed ones included', async () => {
    const order = new KeyOrder();
    const one = deferred();
    const two = deferred();
    await order.acquire(new Set(['a', 'x']), one.promise);
    await order.acquire(new Set(['b', 'y']), two.promise);
    const three = order.acquire(new Set(['x', 'y', 'z']), deferred().promise);
    expect(await settledNow(three)).toBe(false);
    one.resolve();
    expect(await settledNow(three)).toBe(false);
    two.reject(new Error('the batch failed'));
    expect(await settledNow(three)).toBe(true);
  });

  it('forgets a batch once it is answered', async () => {
    const order = new KeyOrder();
    const one = deferred();
    await order.acquire(new Set(['a']), one.promise);
    expect(order.holding).toBe(1);
    one.resolve();
    await settledNow(one.promise);
    expect(order.holding).toBe(0);
    expect(await settledNow(order.acquire(new Set(['a']), deferred().promise))).toBe(true);
  });
});
