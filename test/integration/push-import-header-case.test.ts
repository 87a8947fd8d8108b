/**
 * Issue 28 point 5: an import the agent builds never has two headers that differ only in case. A Shopify products
 * export carries `Status`; the agent wrote both its `status` field and a `Status` custom column into the import
 * header, and the server (as the sandbox now does) failed the job. Pushed for real against the sandbox, as an import
 * (a custom column makes a products file one).
 */
import { describe, expect, it } from 'vitest';
import { usePushHarness } from '../support/push-harness.ts';
import { drive } from '../support/manual-clock.ts';
import { expectReconciled, reportOf } from '../fixtures/push/push-report.ts';

const run = usePushHarness();

const product = (item: string) => [...run.h.sandbox.control.world.products.table.rows()].find((r) => r.item_id === item);

describe('import header names that differ only in case', () => {
  it('maps a `Status` column to the status field when nothing else feeds it', async () => {
    const source = await run.h.source('products', { mode: 'import' });
    const csv = 'Handle,item_id,sku,product_name,Status,Vendor\nshirt,CASE-1,S1,Shirt,active,Acme\nmug,CASE-2,S2,Mug,draft,Acme\n';
    const report = await reportOf(await drive(run.clock, run.h.push(source, 'products_export.csv', csv)));
    expect(report.rows).toMatchObject({ read: 2, sent: 2, accepted: 2, rejected: 0 });
    expectReconciled(report.rows);
    expect(product('CASE-1')).toMatchObject({ status: 'active', custom: { Handle: 'shirt', Vendor: 'Acme' } });
    expect(product('CASE-2')).toMatchObject({ status: 'draft' });
    expect(product('CASE-1')?.['custom']).not.toHaveProperty('Status');
    expect(report.warnings).toContainEqual(expect.stringMatching(/^column "Status" sent as the status field/));
  });

  it('sends a `Status` column under a distinct name, with a warning, when status comes from another column', async () => {
    const source = await run.h.source('products', { mode: 'import' });
    const csv = 'item_id,sku,product_name,status,Status\nCASE-3,S3,Cap,active,Published\n';
    const report = await reportOf(await drive(run.clock, run.h.push(source, 'both.csv', csv)));
    expect(report.rows).toMatchObject({ read: 1, sent: 1, accepted: 1, rejected: 0 });
    expect(product('CASE-3')).toMatchObject({ status: 'active', custom: { 'Status (custom)': 'Published' } });
    expect(report.warnings).toContainEqual(expect.stringMatching(/^custom column "Status" sent as "Status \(custom\)"/));
  });

  it('does the same for a custom field named in `columns:` that differs from a field only in case', async () => {
    const source = await run.h.source('products', { mode: 'import', columns: { Product_Name: 'Title' } });
    const csv = 'item_id,sku,product_name,Title\nCASE-4,S4,Bag,Bag (red)\n';
    const report = await reportOf(await drive(run.clock, run.h.push(source, 'named.csv', csv)));
    expect(report.rows).toMatchObject({ read: 1, accepted: 1 });
    expect(product('CASE-4')).toMatchObject({ product_name: 'Bag', custom: { 'Product_Name (custom)': 'Bag (red)' } });
  });
});
