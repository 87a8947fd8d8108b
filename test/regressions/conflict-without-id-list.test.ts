/**
 * Regression (issue 11, of the same kind): the agent read the ids of a 409 only from `detail.conflicts`. A 409 with
 * no id list, or with the ids in another shape, was resolved by splitting the whole batch or not at all. Now the
 * ids are read from the shapes the agent recognizes, and without any the history and splitting find them.
 * Dialects: terse (no ids) and lenient (`conflicting_ids`).
 */
import { afterEach, expect, it } from 'vitest';
import { runApprovedPricesPull } from '../../src/pull/approved-prices.ts';
import type { DialectName } from '../../src/sandbox/index.ts';
import { answerCounter, currentVersions, expectPullComplete, pullHarness, type PullHarness } from '../pull/support.ts';

let h: PullHarness;
afterEach(() => h.close());

it.each([
  ['terse', 60],
  ['lenient', 12],
] as [DialectName, number][])('%s: cancelled and amended versions in a refused batch are found and recorded', async (dialect, maxRequests) => {
  const answers = answerCounter();
  h = await pullHarness({ sandbox: { dialect, approvals: 600 }, hooks: { onResponse: answers.hook } });
  h.sandbox.control.setDenied(['POST /v1/approved_prices/acknowledge']);
  await expect(runApprovedPricesPull(h.deps)).rejects.toThrow(/403/);
  h.sandbox.control.setDenied([]);
  const ids = currentVersions(h.sandbox).map((a) => a.id);
  for (const id of [ids[3]!, ids[250]!, ids[480]!]) h.sandbox.control.cancel(id);
  for (const id of [ids[7]!, ids[300]!]) h.sandbox.control.amend(id);
  const run = await runApprovedPricesPull(h.deps);
  expect(run.acks.conflicts).toEqual({ cancelled: 3, superseded: 2 });
  expect(run.acks.withdrawals).toBe(3);
  expect(answers.count('approvedPrices.acknowledge')).toBeLessThanOrEqual(maxRequests);
  await expectPullComplete(h);
});
