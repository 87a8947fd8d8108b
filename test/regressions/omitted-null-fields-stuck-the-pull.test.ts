/**
 * Regression (issue 11, failure 2): a server that leaves null fields out of approved prices (the document gives
 * types, not presence): the first page was refused ("items.1.store_id: expected string, received undefined") and
 * the pull was stuck behind that page for ever. Now an absent optional field reads as null, and a row the agent
 * cannot read at all is set aside without blocking its page. Dialect: terse.
 */
import { afterEach, expect, it } from 'vitest';
import { runApprovedPricesPull } from '../../src/pull/approved-prices.ts';
import { currentPricesAt } from '../../src/store/approved-prices.ts';
import { expectPullComplete, pullHarness, type PullHarness } from '../pull/support.ts';
import { sqlValue } from '../support/state-sql.ts';

let h: PullHarness;
afterEach(() => h.close());

it('stores approved prices whose null fields are left out, product-level ones included', async () => {
  h = await pullHarness({ sandbox: { dialect: 'terse', approvals: 400 } });
  await runApprovedPricesPull(h.deps);
  await expectPullComplete(h);
  const productLevel = (await sqlValue<number>(h.db, `SELECT count(*) FROM price_feed WHERE store_id IS NULL`));
  expect(productLevel).toBeGreaterThan(10);
  const record = (await sqlValue<string>(h.db, 'SELECT record FROM approved_prices WHERE store_id IS NULL LIMIT 1'));
  expect(JSON.parse(record ?? '{}')).not.toHaveProperty('store_id'); // kept as the server sent it
  expect((await currentPricesAt(h.db, '2099-01-01')).length).toBeGreaterThan(0);
});

it('a delivered row without a price is set aside, logged and left unacknowledged; the rest of its page is stored', async () => {
  h = await pullHarness({ sandbox: { dialect: 'terse', approvals: 30 } });
  // A row the platform sends without approved_price: nothing the outbox could put in force.
  const broken = h.sandbox.control.world.approvals.get(5) as unknown as { approved_price: unknown };
  broken.approved_price = null;
  const run = await runApprovedPricesPull(h.deps);
  expect(run.deliveries).toMatchObject({ unreadable: 1, inserted: 29 });
  expect(h.sandbox.control.world.approvals.get(5)?.ackCount).toBe(0);
  expect(h.logLines().some((l) => String(l.msg).includes('cannot read'))).toBe(true);
});
