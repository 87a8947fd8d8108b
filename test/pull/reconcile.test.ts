/**
 * The history reconciliation: cancellations of prices already acknowledged become withdrawals, once; the read
 * changes nothing on the platform; the lookback window bounds what it reads.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { sqlColumn } from '../support/state-sql.ts';
import { runApprovedPricesPull } from '../../src/pull/approved-prices.ts';
import { runApprovedPricesReconciliation } from '../../src/pull/reconcile.ts';
import { pullHarness, currentVersions, type PullHarness } from './support.ts';

let h: PullHarness;
afterEach(() => h.close());

async function withdrawals(): Promise<number[]> {
  return await sqlColumn<number>(h.db, `SELECT approval_id FROM price_feed WHERE kind = 'withdrawal' ORDER BY approval_id`);
}

describe('runApprovedPricesReconciliation', () => {
  it('records a withdrawal for each acknowledged price cancelled later, once, without touching the platform', async () => {
    h = await pullHarness({ sandbox: { approvals: 600 } });
    await runApprovedPricesPull(h.deps);
    const delivered = currentVersions(h.sandbox).map((a) => a.id);
    const cancel = [delivered[3], delivered[100], delivered[599 - 30]].filter((id) => id !== undefined);
    for (const id of cancel) h.sandbox.control.cancel(id);
    h.sandbox.control.injectApprovals({ count: 7 }); // pending: a destructive read would move them
    const before = h.sandbox.control.state().approvals;

    const first = await runApprovedPricesReconciliation(h.deps, undefined, { filters: {}, lookbackDays: 0 });
    expect(first.withdrawals).toBe(3);
    expect(await withdrawals()).toEqual([...cancel].sort((a, b) => a - b));
    const again = await runApprovedPricesReconciliation(h.deps, undefined, { filters: {}, lookbackDays: 0 });
    expect(again.withdrawals).toBe(0);
    expect(await withdrawals()).toHaveLength(3);

    const after = h.sandbox.control.state().approvals;
    expect({ pending: after.pending, exported: after.exported_api }).toEqual({ pending: before.pending, exported: before.exported_api });
    // The withdrawn prices are out of current_prices for their item and store.
    const inForce = await sqlColumn(h.db, 'SELECT approval_id FROM current_prices');
    for (const id of cancel) expect(inForce).not.toContain(id);
  });

  it('reads only the lookback window, unless told where to start', async () => {
    h = await pullHarness({ sandbox: { approvals: 300 } });
    await runApprovedPricesPull(h.deps);
    const delivered = currentVersions(h.sandbox);
    const oldest = delivered[0];
    const newest = delivered[delivered.length - 1];
    if (!oldest || !newest) throw new Error('no approvals');
    h.sandbox.control.cancel(oldest.id); // approved about 7 days ago
    h.sandbox.control.cancel(newest.id); // approved in the last day

    const recent = await runApprovedPricesReconciliation(h.deps, undefined, { filters: {}, lookbackDays: 3 });
    expect(await withdrawals()).toEqual([newest.id]);
    expect(recent.versionsRead).toBeLessThan(delivered.length);
    const deep = await runApprovedPricesReconciliation(h.deps, undefined, {
      filters: {},
      lookbackDays: 3,
      since: new Date(Date.parse(oldest.approved_at) - 1000).toISOString(),
    });
    expect(deep.withdrawals).toBe(1);
    expect(await withdrawals()).toEqual([oldest.id, newest.id]);
  });
});
