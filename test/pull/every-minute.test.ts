/**
 * Why the pull can run every minute (its default schedule): a run with nothing new is one request to the platform,
 * an empty deliveries page. And what the approval-to-outbox metric is fed: each version stored for the first time,
 * once, with the time its page committed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ApprovedPrice } from '../../src/api/schemas/index.ts';
import { runApprovedPricesPull } from '../../src/pull/approved-prices.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { pullHarness, type PullHarness } from './support.ts';

let h: PullHarness;
afterEach(() => h.close());

describe('the approved-prices pull, every minute', () => {
  it('costs one request when nothing is new, and reports each new version once with its commit time', async () => {
    const clock = new ManualClock(Date.parse('2026-11-22T10:00:00Z'));
    h = await pullHarness({ sandbox: { approvals: 0 }, clock });
    const stored: { id: number; approved_at: string; at: number }[] = [];
    const deps = {
      ...h.deps,
      onVersionsStored: (versions: readonly ApprovedPrice[], at: number) => {
        for (const v of versions) stored.push({ id: v.id, approved_at: v.approved_at, at });
      },
    };
    await runApprovedPricesPull(deps);
    const before = h.sandbox.control.state().requests.total;
    const empty = await runApprovedPricesPull(deps);
    expect(empty.deliveries).toMatchObject({ pages: 1, rows: 0 });
    expect(h.sandbox.control.state().requests.total - before).toBe(1);
    expect(stored).toEqual([]);

    const injected = h.sandbox.control.injectApprovals({ count: 7 }) as { id: number; approved_at: string }[];
    await clock.advance(42_000);
    await runApprovedPricesPull(deps, undefined, { pageSize: 5 });
    await runApprovedPricesPull(deps); // nothing new: nothing reported again
    expect(stored.map((s) => s.id).sort((a, b) => a - b)).toEqual(injected.map((a) => a.id).sort((a, b) => a - b));
    for (const s of stored) {
      expect(s.approved_at).toBe(injected.find((a) => a.id === s.id)?.approved_at);
      expect(s.at).toBe(clock.now());
    }
  });
});
