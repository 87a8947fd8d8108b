/**
 * A consumer never sees another store's rows: the scoped page equals the feed filtered by hand (its stores and the
 * product-level rows, after `after`, the first `limit`), for random feeds and scopes, on both read paths (per-store
 * index reads up to 16 stores, a filtered walk in seq order above).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sqlRows } from '../support/state-sql.ts';
import { type FeedRow, readScopedFeed } from '../../src/store/price-feed.ts';
import { approval, deliver, openTempDb } from '../outbox/support.ts';

const STORES = Array.from({ length: 40 }, (_, i) => `store-${String(i).padStart(2, '0')}`);

describe('readScopedFeed', () => {
  it('returns exactly the rows of the scope after `after`, oldest first, at most `limit`', async () => {
    const db = await openTempDb();
    const pick = fc.sample(fc.option(fc.constantFrom(...STORES), { freq: 8 }), { numRuns: 1500, seed: 14 });
    for (let page = 0; page < 3; page += 1) {
      await deliver(db, pick.slice(page * 500, (page + 1) * 500).map((store, i) => approval(page * 500 + i + 1, { store_id: store })));
    }
    const all = await sqlRows<FeedRow>(db, 'SELECT * FROM price_feed ORDER BY seq');
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.oneof(fc.constantFrom(...STORES), fc.constant('store-unknown')), { maxLength: 30 }),
        fc.integer({ min: 0, max: all.length + 1 }),
        fc.integer({ min: 1, max: 300 }),
        async (scope, after, limit) => {
          const expected = all.filter((r) => r.seq > after && (r.store_id === null || scope.includes(r.store_id))).slice(0, limit);
          const got = await readScopedFeed(db, scope, after, limit);
          expect(got.map((r) => r.seq)).toEqual(expected.map((r) => r.seq));
          expect(got.every((r) => r.store_id === null || scope.includes(r.store_id))).toBe(true);
        },
      ),
      { numRuns: 300, seed: 14 },
    );
    expect(await readScopedFeed(db, '*', 0, 10_000)).toEqual(all);
  });
});
