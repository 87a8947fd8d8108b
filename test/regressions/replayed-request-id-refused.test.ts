/**
 * Regression (issue 11, of the same kind): a delivery replayed with its request_id after a crash was retried for
 * ever when the server answered 404/409/410/422 (it no longer keeps the page), and on a server that delivers a row
 * once, the prices of that page were lost. Now a refused replay is recovered from the history (history=true around
 * the intent's time): the versions delivered then and not acknowledged are stored and acknowledged.
 * Dialect: strict (request_ids expire after 10 minutes; rows are delivered exactly once).
 */
import { afterEach, expect, it } from 'vitest';
import { DIALECTS } from '../../src/sandbox/index.ts';
import { runApprovedPricesPull } from '../../src/pull/approved-prices.ts';
import { recordDeliveryIntent } from '../../src/store/delivery-intents.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { expectPullComplete, pullHarness, type PullHarness } from '../pull/support.ts';

let h: PullHarness;
afterEach(() => h.close());

it('a page whose replay is refused is recovered from the history; no approved price is lost', async () => {
  const clock = new ManualClock();
  h = await pullHarness({ sandbox: { dialect: 'strict', approvals: 250, clock }, clock });
  // A run that died after its first request: the server handed out 100 rows (now exported_api, never delivered
  // again), the agent stored none of them.
  const intent = await recordDeliveryIntent(h.db, { requestId: crypto.randomUUID(), filters: {}, cursor: null, limit: 100 });
  const lost = await h.client.approvedPrices.deliveries({ request_id: intent.request_id, filters: { history: false }, pagination: { limit: 100 } });
  expect(lost.items).toHaveLength(100);
  await clock.advance((DIALECTS.strict.expiryMs ?? 0) + 60_000); // the agent comes back after the request_id expired

  const run = await runApprovedPricesPull(h.deps, undefined, { pageSize: 100 });
  expect(run.deliveries).toMatchObject({ replayed: 0, abandoned: 1, recovered: 100 });
  await expectPullComplete(h);
  for (const a of lost.items) expect(h.sandbox.control.world.approvals.get(a.id)?.ackCount, `ack of ${a.id}`).toBe(1);
});
