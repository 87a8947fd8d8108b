/**
 * Regression (found by a 5-minute chaos run against the terse dialect): an acknowledgement the platform accepted
 * but whose answer was lost, then a cancellation of that approval on the platform. The next run sent the id again;
 * terse's 409 names no ids or reasons, so the agent read the version back from the history, which shows it both
 * cancelled and acknowledged, and recorded it as refused (conflict: cancelled) while the platform counts it
 * acknowledged. Now an id the history shows acknowledged is recorded as acknowledged, as the platform has it, and its
 * cancellation still reaches the feed as a withdrawal. In every dialect: the other dialects say so in the 409
 * (`already_acknowledged`) or accept the id again, and the reconciliation brings the withdrawal, once.
 */
import { afterEach, expect, it } from 'vitest';
import { runApprovedPricesPull } from '../../src/pull/approved-prices.ts';
import { runApprovedPricesReconciliation } from '../../src/pull/reconcile.ts';
import { DIALECT_NAMES } from '../../src/sandbox/index.ts';
import { sqlColumn, sqlValue } from '../support/state-sql.ts';
import { currentVersions, pullHarness, type PullHarness } from '../pull/support.ts';

let h: PullHarness;
afterEach(() => h.close());

it.each(DIALECT_NAMES)('%s: an approval acknowledged (answer lost) and cancelled since is acknowledged locally, with its withdrawal', async (dialect) => {
  h = await pullHarness({ sandbox: { dialect, approvals: 6 } });
  const control = h.sandbox.control;
  control.setDenied(['POST /v1/approved_prices/acknowledge']);
  await expect(runApprovedPricesPull(h.deps)).rejects.toThrow(/403/);
  control.setDenied([]);
  // The platform accepted the agent's acknowledgement of `id`, and the answer never reached the agent; then a
  // person cancelled the approval.
  const id = currentVersions(h.sandbox)[2]!.id;
  expect(control.world.approvals.acknowledge([id]).ok).toBe(true);
  control.cancel(id);

  await runApprovedPricesPull(h.deps);
  await runApprovedPricesReconciliation(h.deps, undefined, { filters: {}, lookbackDays: 0 });
  const platform = control.world.approvals.all().find((a) => a.id === id)!;
  expect({ acks: platform.ackCount, local: await sqlValue(h.db, 'SELECT status FROM approval_acks WHERE approval_id = ?', [id]) }).toEqual({ acks: 1, local: 'acknowledged' });
  expect(await sqlColumn<number>(h.db, `SELECT approval_id FROM price_feed WHERE kind = 'withdrawal'`)).toEqual([id]);
  const others = currentVersions(h.sandbox).filter((a) => a.id !== id);
  expect(others.map((a) => a.ackCount)).toEqual(others.map(() => 1));
});
