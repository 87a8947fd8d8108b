/**
 * Every mirror through every dialect of the sandbox (docs/sandbox.md): envelopes under items or data, nulls left
 * out, timestamps in other forms, an empty last cursor, undocumented query parameters refused, grids listed in
 * other words. Two runs: everything, then only what changed, and the mirror tables hold what the platform holds.
 */
import { afterEach, expect, it } from 'vitest';
import { runMirror } from '../../src/pull/mirrors.ts';
import { DIALECT_NAMES } from '../../src/sandbox/index.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { MirrorConfigSchema } from './mirror-config.ts';
import { pullHarness, type PullHarness } from './support.ts';
import { sqlValue } from '../support/state-sql.ts';

let h: PullHarness;
afterEach(() => h.close());

const count = (table: string) => sqlValue<number>(h.db, `SELECT count(*) FROM ${table}`);
const STREAMS = ['products', 'product_store', 'transactions', 'competitor_prices'] as const;

it.each(DIALECT_NAMES)('%s: every stream mirrored, then only what changed; the tables hold what the platform holds', async (dialect) => {
  const clock = new ManualClock();
  h = await pullHarness({ sandbox: { dialect, clock } });
  const [s1, s2] = h.sandbox.control.stores;
  await h.client.products.bulk(Array.from({ length: 10 }, (_, i) => ({ item_id: `P-${i}`, sku: `S-${i}` })));
  await clock.advance(1000);
  await h.client.products.bulk(Array.from({ length: 5 }, (_, i) => ({ item_id: `P-${10 + i}`, sku: `S-${10 + i}` })));
  await h.client.productStore.bulk([{ item_id: 'P-1', store_id: s1!, current_price: '1.00' }, { item_id: 'P-2', store_id: s2!, current_price: '2.00' }]);
  await h.client.transactions.bulk(Array.from({ length: 12 }, (_, i) => ({ transaction_id: `T-${i}`, item_id: `P-${i}`, transaction_timestamp: '2026-11-20T08:00:00Z' })));
  await h.client.competitorPrices.bulk(Array.from({ length: 7 }, (_, i) => ({ competitor_name: 'Aldi', item_id: `P-${i}`, observed_at: '2026-11-20T08:00:00Z', regular_price: '1.99', effective_price: '1.79' })));
  const configs = [...STREAMS.map((stream) => MirrorConfigSchema.parse({ stream, page_size: 5 })), MirrorConfigSchema.parse({ stream: 'grids', columns: ['item_id'] })];

  const first = (await Promise.all(configs.map((c) => runMirror(h.deps, c)))).flat();
  expect(first.filter((r) => r.error !== null)).toEqual([]);
  const state = () => h.sandbox.control.state({ keys: false });
  expect(await Promise.all([count('mirror_products'), count('mirror_product_store'), count('mirror_transactions'), count('mirror_competitor_prices')])).toEqual([
    state().products.count,
    state().product_store.count,
    state().transactions.count,
    state().competitor_prices.count,
  ]);
  const grids = h.sandbox.control.world.grids.grids;
  expect(await count('mirror_grid_rows')).toBe(grids.reduce((n, g) => n + g.row_count, 0));

  await clock.advance(60_000);
  const [product] = (await h.client.products.list({ limit: 1 }).next()).value?.items ?? [];
  await h.client.products.patch(product!.id, { product_name: 'Renamed' });
  await h.client.transactions.bulk([{ transaction_id: 'T-new', item_id: 'P-1', transaction_timestamp: '2026-11-21T08:00:00Z' }]);
  const second = (await Promise.all(configs.map((c) => runMirror(h.deps, c)))).flat();
  expect(second.filter((r) => r.error !== null)).toEqual([]);
  const products = second.find((r) => r.stream === 'products');
  expect(products?.updatedAfter).not.toBeNull();
  expect(products?.rows).toBe(6); // the 5 at the watermark again (inclusive) and the renamed one
  expect(await count('mirror_transactions')).toBe(13);
  const renamed = (await sqlValue<string>(h.db, 'SELECT record FROM mirror_products WHERE id = ?', [product!.id]));
  expect(JSON.parse(renamed ?? '{}')).toMatchObject({ product_name: 'Renamed' });
});
