/**
 * Regression (issue 11, of the same kind): acknowledge answered 204 with no body (the success body is not shown in
 * the document) was "an unexpected response body", after the platform had acknowledged. Any 2xx now acknowledges
 * every id sent. Dialect: terse.
 */
import { afterEach, expect, it } from 'vitest';
import { runApprovedPricesPull } from '../../src/pull/approved-prices.ts';
import { currentVersions, expectPullComplete, pullHarness, type PullHarness } from '../pull/support.ts';

let h: PullHarness;
afterEach(() => h.close());

it('a 204 acknowledges every id sent, once', async () => {
  h = await pullHarness({ sandbox: { dialect: 'terse', approvals: 700 } });
  const run = await runApprovedPricesPull(h.deps);
  expect(run.acks.acknowledged).toBe(currentVersions(h.sandbox).length);
  await expectPullComplete(h);
  expect((await runApprovedPricesPull(h.deps)).acks.requests).toBe(0);
});
