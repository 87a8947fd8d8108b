/**
 * Regression (issue 11, failure 5): products with custom columns in bulk mode. A server that ignores unknown JSON
 * fields dropped them while the report said "done" with no warning; a server that rejects unknown fields refused
 * every row. The document promises custom columns only through a CSV import: a products file with custom columns now
 * goes as an import job in either mode, and its report says so. Dialects: terse (drops them from JSON writes),
 * strict (refuses them), default (keeps them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, drive } from '../support/manual-clock.ts';
import { pushHarness, type PushHarness } from '../support/push-harness.ts';
import { expectReconciled, reportOf } from '../fixtures/push/push-report.ts';

describe.each(['terse', 'strict', 'default'] as const)('a products file with custom columns in bulk mode, %s dialect', (dialect) => {
  let h: PushHarness;
  let clock: ManualClock;
  beforeAll(async () => {
    clock = new ManualClock();
    h = await pushHarness({ clock, sandbox: { clock, dialect } });
  });
  afterAll(() => h.close());

  it('reaches the platform with its custom columns through a CSV import, and the report says so', async () => {
    const source = await h.source('products', { mode: 'bulk' });
    const csv = 'item_id,sku,product_name,Price Zone,Buyer Note\nCC-1,S1,Tea,Zone A,check\nCC-2,S2,Milk,Zone B,\n';
    const report = await reportOf(await drive(clock, h.push(source, 'products.csv', csv)));
    expect(report.rows).toMatchObject({ read: 2, accepted: 2, rejected: 0 });
    expectReconciled(report.rows);
    expect(report.mode).toBe('import');
    expect(report.job_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(report.warnings).toContainEqual(expect.stringMatching(/custom columns "Price Zone", "Buyer Note" and the rest of the file went as a CSV import job/));
    const rows = [...h.sandbox.control.world.products.table.rows()].filter((r) => r.item_id.startsWith('CC-'));
    expect(rows.map((r) => [r.item_id, r.product_name, r.custom]).sort()).toEqual([
      ['CC-1', 'Tea', { 'Price Zone': 'Zone A', 'Buyer Note': 'check' }],
      ['CC-2', 'Milk', { 'Price Zone': 'Zone B' }],
    ]);
  });

  it('a products file without custom columns still goes as JSON bulk', async () => {
    const source = await h.source('products', { mode: 'bulk' });
    const report = await reportOf(await drive(clock, h.push(source, 'plain.csv', 'item_id,sku,product_name\nPB-1,S1,Tea\n')));
    expect(report).toMatchObject({ mode: 'bulk', job_id: null, rows: { read: 1, accepted: 1 } });
    expect(report.warnings).toEqual([]);
  });
});
