/**
 * Regression (issue 11, failure 3): a server that takes the acknowledge ids only as `{"ids": [...]}` answered 422
 * to every batch, and the pull was stuck. The document says "list of up to 500 approval ids" and names no field:
 * on a 422 that says the body's shape is wrong the agent tries the other readings, and remembers the one that worked
 * in the state database, for every later run. Dialect: strict (and terse, which takes a bare list).
 */
import { afterEach, expect, it } from 'vitest';
import { runApprovedPricesPull } from '../../src/pull/approved-prices.ts';
import { API_FACTS, apiFact } from '../../src/store/api-state.ts';
import type { DialectName } from '../../src/sandbox/index.ts';
import { answerCounter, expectPullComplete, pullHarness, type PullHarness } from '../pull/support.ts';

let h: PullHarness;
afterEach(() => h.close());

it.each([
  ['strict', 'ids'],
  ['terse', 'array'],
] as [DialectName, string][])('%s: finds the body shape the server takes, remembers it, and asks no more', async (dialect, shape) => {
  const answers = answerCounter();
  h = await pullHarness({ sandbox: { dialect, approvals: 1200 }, hooks: { onResponse: answers.hook } });
  await runApprovedPricesPull(h.deps);
  await expectPullComplete(h);
  expect(await apiFact(h.db, API_FACTS.ackBodyShape)).toBe(shape);
  const refusedAtFirst = answers.count('approvedPrices.acknowledge', 422);
  expect(refusedAtFirst).toBeLessThanOrEqual(2); // one per reading tried, once

  h.sandbox.control.injectApprovals({ count: 50 });
  await runApprovedPricesPull(h.deps);
  await expectPullComplete(h);
  expect(answers.count('approvedPrices.acknowledge', 422)).toBe(refusedAtFirst);
});
