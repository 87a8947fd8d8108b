/**
 * Regression (issue 11, failure 1): a server answered acknowledge with `200 {"acknowledged": <count>,
 * "already_acknowledged": <count>}` (the success body is not shown in the document). The pull ended with
 * "unexpected response body at acknowledged" after the platform had acknowledged, kept the ids waiting and sent them
 * again on every run, never acknowledged later ids and never wrote the per-store files. Now any 2xx acknowledges
 * every id sent, and the store files are written whatever happened to the acknowledgements. Dialect: lenient.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { runApprovedPricesPull } from '../../src/pull/approved-prices.ts';
import { currentVersions, expectPullComplete, pullHarness, type PullHarness } from '../pull/support.ts';

let h: PullHarness;
afterEach(() => h.close());

it('a 200 with counts acknowledges every id sent, once; later ids go on; the stores get their files', async () => {
  h = await pullHarness({ sandbox: { dialect: 'lenient', approvals: 1100 } });
  const exports = { dir: join(h.dir, 'outbox'), format: 'csv' as const };
  const first = await runApprovedPricesPull(h.deps, undefined, { exports });
  const current = currentVersions(h.sandbox);
  expect(first.acks).toMatchObject({ acknowledged: current.length, alreadyAcknowledged: 0, requests: Math.ceil(current.length / 500) });
  await expectPullComplete(h);
  expect((await readdir(exports.dir)).length).toBe(21); // 20 stores and the product-level prices

  const again = await runApprovedPricesPull(h.deps, undefined, { exports });
  expect(again.acks.requests).toBe(0); // nothing sent twice
});

it('the store files are written even when acknowledging fails', async () => {
  h = await pullHarness({ sandbox: { dialect: 'lenient', approvals: 60 } });
  h.sandbox.control.setDenied(['POST /v1/approved_prices/acknowledge']);
  const exports = { dir: join(h.dir, 'outbox'), format: 'csv' as const };
  await expect(runApprovedPricesPull(h.deps, undefined, { exports })).rejects.toThrow(/403/);
  expect((await readdir(exports.dir)).length).toBeGreaterThan(10);
});
