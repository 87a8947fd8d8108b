/**
 * Regression (issue 11, of the same kind): acknowledge answered with a 4xx other than 409 (here a 422 naming an id
 * the platform does not know) ended the run, and the same batch blocked every later run. The offending ids are now
 * parked (found from the 422's positions, or by splitting the batch), with a clear status, and the others go on;
 * `pull --retry-parked` sends parked ids again. Dialect: strict.
 */
import { afterEach, expect, it } from 'vitest';
import { runApprovedPricesPull } from '../../src/pull/approved-prices.ts';
import { getAckState, unparkAll } from '../../src/store/acknowledgements.ts';
import { storeDeliveredPage } from '../../src/store/approved-prices.ts';
import { recordDeliveryIntent } from '../../src/store/delivery-intents.ts';
import { outboxStats } from '../../src/store/outbox-stats.ts';
import { approval } from '../store/support.ts';
import { currentVersions, pullHarness, type PullHarness } from '../pull/support.ts';

let h: PullHarness;
afterEach(() => h.close());

it('an id the platform refuses is parked; the ids after it are acknowledged', async () => {
  h = await pullHarness({ sandbox: { dialect: 'strict', approvals: 120 } });
  // A version the agent stored that the platform does not know (purged there since).
  const intent = await recordDeliveryIntent(h.db, { requestId: crypto.randomUUID(), filters: {}, cursor: null, limit: 1 });
  await storeDeliveredPage(h.db, intent.id, [approval(99_999)], null);
  const run = await runApprovedPricesPull(h.deps);
  expect(run.acks.parked).toBe(1);
  expect(run.acks.acknowledged).toBe(currentVersions(h.sandbox).length);
  expect(await getAckState(h.db, 99_999)).toMatchObject({ status: 'parked', conflict_reason: expect.stringMatching(/^refused with 422/) as unknown });
  expect((await outboxStats(h.db)).approvals).toMatchObject({ parked: 1, ack_pending: 0 });

  // Parked ids are not sent again by the next run; --retry-parked puts them back in the queue.
  expect((await runApprovedPricesPull(h.deps)).acks.requests).toBe(0);
  expect(await unparkAll(h.db)).toBe(1);
  expect((await runApprovedPricesPull(h.deps)).acks).toMatchObject({ requests: 1, parked: 1 });
});
