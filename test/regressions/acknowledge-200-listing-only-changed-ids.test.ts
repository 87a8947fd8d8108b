/**
 * Regression (issue 11, of the same kind): a 200 that lists only the ids whose state changed left the others
 * waiting; they were sent again on every run. Ids an earlier run had acknowledged (its answer lost in a crash) are
 * accepted again by such a server and not listed. Any 2xx now acknowledges every id sent; the list only splits the
 * run's counts. Dialect: strict.
 */
import { afterEach, expect, it } from 'vitest';
import { runApprovedPricesPull } from '../../src/pull/approved-prices.ts';
import { currentVersions, pullHarness, type PullHarness } from '../pull/support.ts';

let h: PullHarness;
afterEach(() => h.close());

it('ids acknowledged by a run whose answer was lost are marked acknowledged, not sent again', async () => {
  h = await pullHarness({ sandbox: { dialect: 'strict', approvals: 300 } });
  h.sandbox.control.setDenied(['POST /v1/approved_prices/acknowledge']);
  await expect(runApprovedPricesPull(h.deps)).rejects.toThrow(/403/);
  h.sandbox.control.setDenied([]);
  const early = currentVersions(h.sandbox).slice(0, 40).map((a) => a.id);
  await h.client.approvedPrices.acknowledge(early, { shape: 'ids' }); // the crashed run's batch: platform took it
  const run = await runApprovedPricesPull(h.deps);
  expect(run.acks.alreadyAcknowledged).toBe(40);
  expect(run.acks.acknowledged).toBe(currentVersions(h.sandbox).length - 40);
  expect((await runApprovedPricesPull(h.deps)).acks.requests).toBe(0);
  const repeats = h.sandbox.control.state().approvals.acks.filter((a) => a.repeat_acks > 0).map((a) => a.id);
  expect(repeats.sort((a, b) => a - b)).toEqual(early.sort((a, b) => a - b)); // sent again once, by the run that could not know
  for (const a of currentVersions(h.sandbox)) expect(a.ackCount).toBe(1);
});
