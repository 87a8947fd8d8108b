/**
 * Regression (issue 11, of the same kind): a stored cursor the server no longer accepts (404/409/410/422) was sent
 * again on every run: the pull or the mirror never got past it. Now the listing starts over from a safe point (the
 * start of the listing; the mirror keeps its watermark). Dialect: strict (cursors expire after 10 minutes: 410).
 */
import { afterEach, expect, it } from 'vitest';
import { DIALECTS } from '../../src/sandbox/index.ts';
import { runApprovedPricesPull } from '../../src/pull/approved-prices.ts';
import { runMirror } from '../../src/pull/mirrors.ts';
import { pullCursor } from '../../src/store/delivery-intents.ts';
import { streamState } from '../../src/store/mirrors.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { MirrorConfigSchema } from '../pull/mirror-config.ts';
import { expectPullComplete, pullHarness, type PullHarness } from '../pull/support.ts';
import { sqlValue } from '../support/state-sql.ts';

let h: PullHarness;
afterEach(() => h.close());
const expiry = DIALECTS.strict.expiryMs ?? 0;

/** A harness whose client stops the run (as SIGTERM would) once `operation` has had `n` answers. */
async function stoppingHarness(operation: string, n: number, sandbox: { approvals?: number }) {
  const clock = new ManualClock();
  const stop = new AbortController();
  let answers = 0;
  const onResponse = (e: { operation: string }) => {
    if (e.operation === operation && ++answers === n) stop.abort(new Error('stopped'));
  };
  h = await pullHarness({ sandbox: { dialect: 'strict', clock, ...sandbox }, clock, hooks: { onResponse } });
  return { clock, stop };
}

it('the pull starts its listing over when the stored cursor expired', async () => {
  const { clock, stop } = await stoppingHarness('approvedPrices.deliveries', 2, { approvals: 250 });
  await expect(runApprovedPricesPull(h.deps, stop.signal, { pageSize: 50 })).rejects.toThrow('stopped');
  expect(await pullCursor(h.db)).not.toBeNull(); // the cursor of the third page
  await clock.advance(expiry + 1000);

  const run = await runApprovedPricesPull(h.deps, undefined, { pageSize: 50 });
  expect(run.deliveries.restarted).toBe(1);
  await expectPullComplete(h);
});

it('a mirror restarts its listing with the same watermark when the stored cursor expired', async () => {
  const { clock, stop } = await stoppingHarness('products.list', 1, {});
  await h.client.products.bulk(Array.from({ length: 30 }, (_, i) => ({ item_id: `P-${i}`, sku: `S-${i}` })));
  const config = MirrorConfigSchema.parse({ stream: 'products', page_size: 10 });
  await expect(runMirror(h.deps, config, stop.signal)).rejects.toThrow('stopped');
  expect((await streamState(h.db, 'products'))?.cursor).not.toBeNull();
  await clock.advance(expiry + 1000);
  const [run] = await runMirror(h.deps, config);
  expect(run).toMatchObject({ resumed: false, rows: 30, error: null });
  expect((await sqlValue<number>(h.db, 'SELECT count(*) FROM mirror_products'))).toBe(30);
});
