/**
 * Push end to end against every reading of the API document the sandbox plays (docs/sandbox.md, "Dialects"), in
 * both modes: one file per entity, every row accepted and reconciled, the platform holding each row once. Import
 * mode polls jobs whose statuses lenient names otherwise; the writes go through strict's refusal of undefined
 * fields and terse's dropping of them. One ManualClock for the sandbox and the agent: no real sleep.
 */
import { describe, expect, it } from 'vitest';
import { DIALECT_NAMES } from '../../src/sandbox/index.ts';
import type { Entity } from '../../src/api/schemas/index.ts';
import { ManualClock, drive } from '../support/manual-clock.ts';
import { usePushHarness } from '../support/push-harness.ts';
import { expectReconciled, reportOf } from '../fixtures/push/push-report.ts';

function files(p: string, stores: readonly string[]): Record<Entity, string> {
  return {
    products: `item_id,sku,product_name,brand\n${p}-P1,S1,Tea,Acme\n${p}-P2,S2,Milk,Acme\n${p}-P3,S3,Bread,\n`,
    product_store: `item_id,store_id,current_price,regular_price\n${p}-P1,${stores[0]},1.99,2.49\n${p}-P2,${stores[1]},0.89,\n${p}-P3,${stores[0]},2.10,2.10\n`,
    transactions: `transaction_id,item_id,transaction_timestamp,price,quantity\n${p}-T1,${p}-P1,2026-11-20T08:00:00Z,1.99,2\n${p}-T2,${p}-P2,2026-11-20T08:05:00Z,0.89,1\n`,
    competitor_prices: `competitor_name,observed_at,regular_price,effective_price,item_id\nLidl,2026-11-20T08:00:00Z,2.09,1.99,${p}-P1\nAldi,2026-11-20T08:00:00Z,0.85,0.85,${p}-P2\n`,
  };
}

describe.each(DIALECT_NAMES)('push against the %s dialect', (dialect) => {
  const clock = new ManualClock();
  const { h } = usePushHarness({ clock, sandbox: { clock, dialect, jobPace: { queuedMs: 20_000, tickMs: 1_000, rowsPerTick: 2 } } });

  it.each(['bulk', 'import'] as const)('%s mode: every file done, every row accepted once', async (mode) => {
    const p = `${dialect.slice(0, 2).toUpperCase()}${mode === 'bulk' ? 'B' : 'I'}`;
    const csv = files(p, h.sandbox.control.stores);
    const before = h.sandbox.control.state().competitor_prices.count;
    for (const entity of ['products', 'product_store', 'transactions', 'competitor_prices'] as const) {
      const source = await h.source(entity, { mode });
      const report = await reportOf(await drive(clock, h.push(source, `${entity}.csv`, csv[entity])));
      const rows = csv[entity].trim().split('\n').length - 1;
      expect(report, `${entity}: ${JSON.stringify(report.error)}`).toMatchObject({ mode, rows: { read: rows, accepted: rows, rejected: 0 } });
      expectReconciled(report.rows);
      if (mode === 'import') expect(report.job_id).toMatch(/^[0-9a-f-]{36}$/);
    }
    const keys = h.sandbox.control.state({ keys: true });
    expect(keys.products.keys?.filter((k) => k.startsWith(`${p}-`)).sort()).toEqual([`${p}-P1`, `${p}-P2`, `${p}-P3`]);
    expect(keys.transactions.keys?.filter((k) => k.startsWith(`${p}-`)).sort()).toEqual([`${p}-T1`, `${p}-T2`]);
    const storeRows = [...h.sandbox.control.world.productStore.table.rows()].filter((r) => r.item_id.startsWith(`${p}-`));
    expect(storeRows).toHaveLength(3);
    expect(h.sandbox.control.state().competitor_prices.count - before).toBe(2);
  });

  it('bulk mode: a store the platform does not know rejects its row, and the rest of the batch is written', async () => {
    // default, terse and lenient refuse the row among the results of a 200; strict refuses the whole batch with a
    // 422 naming the row (storeBulkRefusals), and the agent sends the other rows again without it.
    const p = `${dialect.slice(0, 2).toUpperCase()}U`;
    const [store] = h.sandbox.control.stores;
    const csv = `item_id,store_id,current_price\n${p}-P1,${store},1.99\n${p}-P2,00000000-0000-4000-8000-000000000000,0.89\n${p}-P3,${store},2.10\n`;
    const source = await h.source('product_store', { mode: 'bulk' });
    const report = await reportOf(await drive(clock, h.push(source, 'unknown-store.csv', csv)));
    expect(report.rows).toMatchObject({ read: 3, sent: 3, accepted: 2, rejected: 1 });
    expectReconciled(report.rows);
    expect(report.first_errors).toMatchObject([{ line: 3, stage: 'api' }]);
    expect(report.first_errors[0]?.message).toMatch(/store/);
    const storeRows = [...h.sandbox.control.world.productStore.table.rows()].filter((r) => r.item_id.startsWith(`${p}-`));
    expect(storeRows.map((r) => r.item_id).sort()).toEqual([`${p}-P1`, `${p}-P3`]);
  });

  it('missing: delete counts a row the platform had deleted already as deleted (204 or 404), and forgets it', async () => {
    // strict answers 404 to a DELETE of a row deleted before (deleteAgain), the others 204.
    const p = `${dialect.slice(0, 2).toUpperCase()}D`;
    const [store] = h.sandbox.control.stores;
    const csv = (items: readonly string[]) => `item_id,store_id,current_price\n${items.map((i) => `${p}-${i},${store},1.00\n`).join('')}`;
    const source = await h.source('product_store', { delta: true, snapshot: true, missing: 'delete', brakes: { max_missing_share: 0.5 } });
    await reportOf(await drive(clock, h.push(source, 'day1.csv', csv(['P1', 'P2', 'P3']))));
    const table = h.sandbox.control.world.productStore.table;
    const gone = [...table.rows()].find((r) => r.item_id === `${p}-P3`);
    if (gone === undefined) throw new Error('P3 was not written');
    table.delete(gone); // deleted on the platform (its UI, another system) before the agent's snapshot lacks it
    const day2 = await reportOf(await drive(clock, h.push(source, 'day2.csv', csv(['P1', 'P2']))));
    expect(day2.delta).toMatchObject({ missing: 1, deleted: 1 });
    const day3 = await reportOf(await drive(clock, h.push(source, 'day3.csv', csv(['P1', 'P2']))));
    expect(day3.delta).toMatchObject({ missing: 0, deleted: 0 });
  });
});
