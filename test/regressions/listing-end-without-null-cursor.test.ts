/**
 * Regression (issue 11, of the same kind): a listing ended only at `next_cursor: null`. A server that leaves null
 * fields out sends no next_cursor on the last page, another sends "": the agent asked again with a missing or empty
 * cursor (or failed on the page). A listing now ends at a null, absent or empty next_cursor.
 * Dialects: terse (absent) and lenient ("").
 */
import { afterEach, expect, it } from 'vitest';
import { runApprovedPricesPull } from '../../src/pull/approved-prices.ts';
import { runMirror } from '../../src/pull/mirrors.ts';
import type { DialectName } from '../../src/sandbox/index.ts';
import { MirrorConfigSchema } from '../pull/mirror-config.ts';
import { answerCounter, expectPullComplete, pullHarness, type PullHarness } from '../pull/support.ts';

let h: PullHarness;
afterEach(() => h.close());

it.each(['terse', 'lenient'] as DialectName[])('%s: a mirror and the pull stop at the last page', async (dialect) => {
  const answers = answerCounter();
  h = await pullHarness({ sandbox: { dialect, approvals: 120 }, hooks: { onResponse: answers.hook } });
  await h.client.products.bulk(Array.from({ length: 25 }, (_, i) => ({ item_id: `P-${i}`, sku: `S-${i}` })));
  const [mirror] = await runMirror(h.deps, MirrorConfigSchema.parse({ stream: 'products', page_size: 10 }));
  expect(mirror).toMatchObject({ pages: 3, rows: 25, error: null });
  expect(answers.count('products.list')).toBe(3);
  const pull = await runApprovedPricesPull(h.deps, undefined, { pageSize: 100 });
  expect(pull.deliveries.pages).toBe(2);
  await expectPullComplete(h);
});
