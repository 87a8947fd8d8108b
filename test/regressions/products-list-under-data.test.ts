/**
 * Regression (issue 11, of the same kind): the products mirror read the products list only as `{items,
 * next_cursor}`; its body is not shown in the document, and a server that names the rows `data` (as the document
 * does for transactions) failed every run. Rows are now read under `items` or `data`, for every list. Dialect: terse.
 */
import { afterEach, expect, it } from 'vitest';
import { runMirror } from '../../src/pull/mirrors.ts';
import { MirrorConfigSchema } from '../pull/mirror-config.ts';
import { pullHarness, type PullHarness } from '../pull/support.ts';
import { sqlValue } from '../support/state-sql.ts';

let h: PullHarness;
afterEach(() => h.close());

it('mirrors products listed under data', async () => {
  h = await pullHarness({ sandbox: { dialect: 'terse' } });
  await h.client.products.bulk(Array.from({ length: 12 }, (_, i) => ({ item_id: `P-${i}`, sku: `S-${i}` })));
  const [run] = await runMirror(h.deps, MirrorConfigSchema.parse({ stream: 'products', page_size: 5 }));
  expect(run).toMatchObject({ rows: 12, pages: 3, error: null });
  expect((await sqlValue<number>(h.db, 'SELECT count(*) FROM mirror_products'))).toBe(12);
});
