/**
 * A product-level price list (one price per item, no store): the agent's decision (docs/mapping.md, "Product-level
 * prices") is to send it, when the source says `product_level: true`, as product_store records without store_id.
 * The API document reads both ways; the sandbox plays both: the default dialect refuses such a row (store_id
 * "required on upsert"), lenient stores it as the item's product-level record. Either way nothing is lost or hidden:
 * refused, the file fails with the server's reason in its rejects; taken, the platform holds one record per item.
 */
import { describe, expect, it } from 'vitest';
import { usePushHarness } from '../support/push-harness.ts';
import { drive } from '../support/manual-clock.ts';
import { expectReconciled, rejectLines, reportOf } from '../fixtures/push/push-report.ts';

const priceList = (p: string) => `Artikel;Preis\n${p}-1;1,99\n${p}-2;2,49\n${p}-1;1,89\n`;

describe.each([
  ['lenient', 'product_level'],
  ['default', 'refused'],
] as const)('a product-level price list against the %s dialect (store_id left out: %s)', (dialect, reading) => {
  const { h, clock } = usePushHarness({ sandbox: { dialect } });

  it.each(['bulk', 'import'] as const)('%s mode', async (mode) => {
    const source = await h.source('product_store', {
      mode,
      product_level: true,
      decimal_separator: ',',
      columns: { item_id: 'Artikel', current_price: 'Preis' },
    });
    const p = `PL${mode === 'bulk' ? 'B' : 'I'}`;
    const result = await drive(clock, h.push(source, `prices-${mode}.csv`, priceList(p)));
    const records = () => [...h.sandbox.control.world.productStore.table.rows()].filter((r) => r.item_id.startsWith(`${p}-`));
    if (reading === 'product_level') {
      const report = await reportOf(result);
      expect(report.rows).toMatchObject({ read: 3, accepted: 2, superseded: 1, rejected: 0 });
      expectReconciled(report.rows);
      expect(records().map((r) => [r.item_id, r.store_id, r.current_price]).sort()).toEqual([
        [`${p}-1`, null, '1.89'],
        [`${p}-2`, null, '2.49'],
      ]);
    } else {
      const report = await reportOf(result, 'failed');
      expect(report.error?.code).toBe('NOTHING_ACCEPTED');
      expect(records()).toEqual([]);
      expect((await rejectLines(report.rejectsPath))[1]).toMatch(/store_id/);
    }
  });
});
