/**
 * Regression (issue 11, of the same kind): deliveries did not send `filters.history` (its default on deliveries is
 * not stated). A server that reads a missing history as true delivered the whole history, read-only: cancelled and
 * superseded versions came in as prices, and nothing moved on the platform. Every delivery now says history: false.
 * Dialect: lenient.
 */
import { afterEach, expect, it } from 'vitest';
import { runApprovedPricesPull } from '../../src/pull/approved-prices.ts';
import { expectPullComplete, pullHarness, sandboxApprovals, type PullHarness } from '../pull/support.ts';
import { sqlValue } from '../support/state-sql.ts';

let h: PullHarness;
afterEach(() => h.close());

it('delivers only current pending versions, and moves them on the platform', async () => {
  h = await pullHarness({ sandbox: { dialect: 'lenient', approvals: 200 } }); // 200 approvals: some amended, some cancelled
  const run = await runApprovedPricesPull(h.deps);
  const versions = sandboxApprovals(h.sandbox);
  expect(run.deliveries.rows).toBe(versions.filter((a) => a.cancelled_at === null && a.supersededBy === null).length);
  expect((await sqlValue<number>(h.db, `SELECT count(*) FROM price_feed WHERE kind = 'withdrawal'`))).toBe(0);
  await expectPullComplete(h);
});
