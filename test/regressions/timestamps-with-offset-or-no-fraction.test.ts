/**
 * Regression (issue 11, of the same kind): the agent read only `2026-11-22T10:00:00.000Z`-style timestamps. A server
 * writing `+00:00`, no fractions or microseconds (all ISO 8601 UTC, as the document says) failed the schemas, and
 * a history window built from a time without fractions missed the versions it was meant to find. Timestamps are
 * now read in any ISO 8601 form, kept as sent, compared as instants, and history windows are a second wider.
 * Dialects: terse (`+00:00`, no fractions) and lenient (microseconds and `+00:00`).
 */
import { afterEach, expect, it } from 'vitest';
import { runApprovedPricesPull } from '../../src/pull/approved-prices.ts';
import { runMirror } from '../../src/pull/mirrors.ts';
import type { DialectName } from '../../src/sandbox/index.ts';
import { streamState } from '../../src/store/mirrors.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { MirrorConfigSchema } from '../pull/mirror-config.ts';
import { expectPullComplete, pullHarness, type PullHarness } from '../pull/support.ts';

let h: PullHarness;
afterEach(() => h.close());

it.each([
  ['terse', /^2026-11-22T10:00:01\+00:00$/],
  ['lenient', /^2026-11-22T10:00:01\.500000\+00:00$/],
] as [DialectName, RegExp][])('%s: watermarks in the server’s form; conflicts found in the history', async (dialect, form) => {
  const clock = new ManualClock(Date.parse('2026-11-22T10:00:00.250Z'));
  h = await pullHarness({ sandbox: { dialect, clock } });
  await h.client.products.bulk([{ item_id: 'A', sku: 'A' }]);
  await clock.advance(1250);
  await h.client.products.bulk([{ item_id: 'B', sku: 'B' }]);
  const config = MirrorConfigSchema.parse({ stream: 'products' });
  const [first] = await runMirror(h.deps, config);
  expect(first?.watermark).toMatch(form);
  const [second] = await runMirror(h.deps, config);
  expect(second).toMatchObject({ updatedAfter: first?.watermark, error: null });
  expect(second?.rows).toBeGreaterThanOrEqual(1); // the boundary row, read again and stored once
  expect((await streamState(h.db, 'products'))?.watermark).toMatch(form);

  // Approved at 10:00:01.500, delivered, cancelled before the agent acknowledged them: the 409 names no id, the
  // history read finds them in a window built from times the server showed (without fractions in terse).
  const injected = h.sandbox.control.injectApprovals({ count: 20 }) as { id: number }[];
  h.sandbox.control.setAckConflictDetail(false);
  h.sandbox.control.setDenied(['POST /v1/approved_prices/acknowledge']);
  await expect(runApprovedPricesPull(h.deps)).rejects.toThrow(/403/);
  h.sandbox.control.setDenied([]);
  const cancelled = injected.slice(0, 3).map((a) => a.id);
  for (const id of cancelled) h.sandbox.control.cancel(id);
  const run = await runApprovedPricesPull(h.deps);
  expect(run.acks.conflicts).toEqual({ cancelled: 3 });
  expect(run.acks.withdrawals).toBe(3);
  await expectPullComplete(h);
});
