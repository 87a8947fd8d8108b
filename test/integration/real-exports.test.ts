/**
 * The corpus of real exports (test/fixtures/real/README.md: sources and licences), each pushed end to end against the
 * sandbox with the configuration the README's Push section teaches: the platform holds exactly what the report calls
 * accepted, no placeholder is stored, every collision is reported.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PushSource } from '../../src/ingest/file/push-file.ts';
import { usePushHarness } from '../support/push-harness.ts';
import { drive } from '../support/manual-clock.ts';
import { expectReconciled, rejectLines, reportOf } from '../fixtures/push/push-report.ts';

const REAL = join(import.meta.dirname, '..', 'fixtures', 'real');
const PLACEHOLDERS = /^(#N\/A|N\/A|NULL|#NV|-)$/i;

const { h, clock } = usePushHarness({ maxInFlight: 4 });

/** Pushes a fixture; `force`: its bytes were pushed before for the same entity (another source's test). */
async function push(source: PushSource, fixture: string, name = fixture.split('/').at(-1) ?? fixture, force = false) {
  return drive(clock, h.push(source, name, await readFile(join(REAL, fixture)), { force }));
}

const world = () => h.sandbox.control.world;
const noPlaceholder = (values: Iterable<unknown>) => [...values].filter((v) => typeof v === 'string' && PLACEHOLDERS.test(v.trim()));

describe('a UK online retailer: transaction lines keyed by invoice and item, two-digit years', () => {
  const config = {
    date_format: 'M/D/YY H:mm',
    timezone: 'Europe/London',
    columns: {
      transaction_id: '{InvoiceNo}-{StockCode}',
      item_id: 'StockCode',
      transaction_timestamp: 'InvoiceDate',
      quantity: 'Quantity',
      price: 'UnitPrice',
    },
    defaults: { currency: 'GBP' },
    ignore_columns: ['Description', 'CustomerID', 'Country'],
  };

  it.each(['bulk', 'import'] as const)('%s: 140 lines, one item twice on an invoice: 139 accepted, 1 merged (its quantity added, no sale lost)', async (mode) => {
    const before = h.sandbox.control.state().transactions.count;
    // Batches of 120 lines: the two lines of invoice 536381 with item 71270 land in different batches.
    const source = await h.source('transactions', { ...config, mode, batch_size: 120 });
    const report = await reportOf(await push(source, 'uci-online-retail/online-retail-2010-12-01.csv', 'online-retail.csv', mode === 'import'));
    expect(report.rows).toMatchObject({ read: 140, accepted: 139, merged: 1, superseded: 0, rejected: 0, skipped: 0 });
    expect(report.merged).toEqual([{ line: 126, message: 'merged into line 114: the same transaction_id, its quantity added (duplicate_keys: sum)' }]);
    expectReconciled(report.rows);
    expect(report.warnings).toEqual([]);
    const rows = [...world().transactions.table.rows()];
    // The first push stores 139; the second writes the same 139 keys again.
    expect(h.sandbox.control.state().transactions.count - before).toBe(mode === 'bulk' ? 139 : 0);
    const line = (id: string) => rows.find((r) => r.transaction_id === id);
    // Lines 114 (1 unit) and 126 (3 units) of invoice 536381: one transaction of 4 units.
    expect(line('536381-71270')).toMatchObject({ quantity: '4', price: '1.25', currency: 'GBP' });
    // 12/1/10 8:26 in London in December is 08:26 UTC.
    expect(line('536365-85123A')?.transaction_timestamp).toBe('2010-12-01T08:26:00Z');
  });
});

describe('a Shopify products export: variants, continuation rows, an HTML description over 1,000 characters', () => {
  const skuOrVariant = ['Variant SKU', '{Handle}/{Option1 Value}'];
  const config = {
    columns: { item_id: skuOrVariant, sku: skuOrVariant, product_id: 'Handle', product_name: 'Title', brand: 'Vendor', product_type: 'Type', status: 'Status', tags: 'Tags' },
    fill_down: ['Title', 'Vendor', 'Type', 'Status', 'Tags'],
    ignore_columns: [
      'Body (HTML)', 'Published', 'Option1 Name', 'Option2 Name', 'Option2 Value', 'Option3 Name', 'Option3 Value',
      'Variant Grams', 'Variant Inventory Tracker', 'Variant Inventory Qty', 'Variant Inventory Policy',
      'Variant Fulfillment Service', 'Variant Price', 'Variant Compare At Price', 'Variant Requires Shipping',
      'Variant Taxable', 'Variant Barcode', 'Image Src', 'Image Position', 'Image Alt Text', 'Gift Card', 'SEO Title',
      'SEO Description', 'Google Shopping / Google Product Category', 'Google Shopping / Gender',
      'Google Shopping / Age Group', 'Google Shopping / MPN', 'Google Shopping / AdWords Grouping',
      'Google Shopping / AdWords Labels', 'Google Shopping / Condition', 'Google Shopping / Custom Product',
      'Google Shopping / Custom Label 0', 'Google Shopping / Custom Label 1', 'Google Shopping / Custom Label 2',
      'Google Shopping / Custom Label 3', 'Google Shopping / Custom Label 4', 'Variant Image', 'Variant Weight Unit',
      'Variant Tax Code', 'Cost per item',
    ],
  };

  it('every product and variant accepted, the variant row named and branded from the row above', async () => {
    const source = await h.source('products', config);
    const report = await reportOf(await push(source, 'shopify/products_export_1.csv'));
    expect(report.rows).toMatchObject({ read: 21, accepted: 21, rejected: 0, superseded: 0 });
    // Its `tags` column is a custom column: the file goes as a CSV import, and the report says so (nothing else).
    expect(report).toMatchObject({ mode: 'import', warnings: [expect.stringMatching(/^custom column "tags" and the rest of the file went as a CSV import job/)] });
    const products = [...world().products.table.rows()];
    const yellow = products.find((p) => p.item_id === 'gardening-gloves/Yellow');
    expect(yellow).toMatchObject({ product_name: 'Gardening Gloves', brand: 'Company 123', product_id: 'gardening-gloves' });
    expect(products.find((p) => p.item_id === 'black-armchairs/Default Title')).toMatchObject({ product_type: 'Indoor' });
    expect(noPlaceholder(products.flatMap((p): unknown[] => Object.values(p)))).toEqual([]);
  });
});

describe("a grocery chain's per-store price lists: store and date only in the file name, promotion rows", () => {
  const fileName = '^(?<store>\\d{4})-(?<date>\\d{4}-\\d{2}-\\d{2})\\.csv$';

  it('as competitor prices: two stores of the same chain are two competitors, nothing overwritten', async () => {
    const source = await h.source('competitor_prices', {
      file_name: fileName,
      timezone: 'Europe/Zagreb',
      columns: {
        competitor_name: 'Konzum {file.store}',
        observed_at: '{file.date}',
        item_id: 'ProductId',
        competitor_sku: 'ProductId',
        barcode: 'Barcode',
        regular_price: ['Price', 'AnchorPrice'],
        effective_price: ['SpecialPrice', 'Price'],
        promo_price: 'SpecialPrice',
      },
      defaults: { currency: 'EUR' },
      ignore_columns: ['Product', 'Brand', 'Quantity', 'Unit', 'Category', 'UnitPrice', 'BestPrice30'],
    });
    const before = h.sandbox.control.state().competitor_prices.count;
    const first = await reportOf(await push(source, 'konzum/0204-2025-07-03.csv'));
    const second = await reportOf(await push(source, 'konzum/0530-2025-07-03.csv'));
    expect(first.rows).toMatchObject({ read: 103, accepted: 103, rejected: 0 });
    expect(second.rows).toMatchObject({ read: 52, accepted: 52, rejected: 0 });
    expect(h.sandbox.control.state().competitor_prices.count - before).toBe(103 + 52);
    const rows = [...world().competitorPrices.table.rows()];
    // A promotion row: no regular Price; the special price is what the shopper pays.
    expect(rows.find((r) => r.competitor_name === 'Konzum 0204' && r.item_id === '90704273')).toMatchObject({
      regular_price: '1.59',
      effective_price: '1.19',
      promo_price: '1.19',
      observed_at: '2025-07-02T22:00:00Z',
    });
    expect(rows.find((r) => r.competitor_name === 'Konzum 0204' && r.item_id === '01647057')?.barcode).toBe('3850334018236');
  });

  it("as the chain's own store prices: store codes mapped to store ids; a code not in the map fails its file", async () => {
    const [a = '', b = ''] = h.sandbox.control.state().stores;
    const stores = join(h.dir, 'stores.csv');
    await writeFile(stores, `code,store_id\n0204,${a}\n0530,${b}\n`);
    const source = await h.source('product_store', {
      file_name: fileName,
      columns: {
        item_id: 'ProductId',
        store_id: '{file.store}',
        current_price: ['SpecialPrice', 'Price'],
        regular_price: ['Price', 'AnchorPrice'],
        price_effective_date: '{file.date}',
        sku: 'Barcode',
      },
      maps: { store_id: { map_file: stores } },
      defaults: { currency: 'EUR' },
      ignore_columns: ['Product', 'Brand', 'Quantity', 'Unit', 'Category', 'UnitPrice', 'BestPrice30'],
    });
    const report = await reportOf(await push(source, 'konzum/0204-2025-07-03.csv'));
    expect(report.rows).toMatchObject({ read: 103, accepted: 103, rejected: 0 });
    const atA = [...world().productStore.table.rows()].filter((r) => r.store_id === a);
    expect(atA.find((r) => r.item_id === '90704273')).toMatchObject({ current_price: '1.19', regular_price: '1.59', price_effective_date: '2025-07-03' });

    // The same bytes dropped as store 0901 (the name is data: not a duplicate), which the map does not know: every
    // row is a reject naming the code, and the file fails.
    const unknown = await reportOf(await push(source, 'konzum/0204-2025-07-03.csv', '0901-2025-07-03.csv'), 'failed');
    expect(unknown.error?.code).toBe('NOTHING_ACCEPTED');
    expect(unknown.rows).toMatchObject({ read: 103, accepted: 0, sent: 0, rejected_locally: 103 });
    expect((await rejectLines(unknown.rejectsPath))[1]).toMatch(/,store_id,unmapped_value,"""0901"" is not in maps\.store_id"$/);
  });
});
