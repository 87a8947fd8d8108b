/**
 * More of the corpus of real exports (test/fixtures/real/README.md: sources and licences), each pushed end to end
 * against the sandbox with the configuration a retail IT person writes from the README and docs/mapping.md: exact
 * counts of every row's fate, the platform holding what the report calls accepted, every refused row with its reason.
 *
 * A file that needs a part of the mapping language issue 28 specifies and main does not have yet is written against
 * the configuration and outcome the issue specifies and skipped, with the point it waits for named.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import type { PushSource } from '../../src/ingest/file/push-file.ts';
import { usePushHarness } from '../support/push-harness.ts';
import { drive } from '../support/manual-clock.ts';
import { expectReconciled, reportOf } from '../fixtures/push/push-report.ts';

const REAL = join(import.meta.dirname, '..', 'fixtures', 'real');

const run = usePushHarness({ maxInFlight: 4 });

/** Pushes a fixture under its own name. */
/** Pushes a fixture; `force`: its bytes were pushed before for the same entity (another case's source). */
async function push(source: PushSource, fixture: string, force = false) {
  return drive(run.clock, run.h.push(source, fixture.split('/').at(-1) ?? fixture, await readFile(join(REAL, fixture)), { force }));
}

const world = () => run.h.sandbox.control.world;

/** The rejects CSV as records keyed by its header (`line`, the file's own columns, `field`, `code`, `message`). */
async function rejectRecords(path: string | null): Promise<Record<string, string>[]> {
  if (path === null) return [];
  return parse<Record<string, string>>(await readFile(path, 'utf8'), { bom: true, columns: true });
}

describe("WooCommerce's sample products export: a BOM, 51 columns, variations under their parent's SKU", () => {
  const FILE = 'woocommerce/sample_products.csv';
  // Every column of the export this mapping does not read: without the list they would travel as custom columns.
  const unread = [
    'ID', 'Published', 'Is featured?', 'Visibility in catalog', 'Short description', 'Description',
    'Date sale price starts', 'Date sale price ends', 'Tax status', 'Tax class', 'In stock?', 'Stock',
    'Backorders allowed?', 'Sold individually?', 'Weight (lbs)', 'Length (in)', 'Width (in)', 'Height (in)',
    'Allow customer reviews?', 'Purchase note', 'Categories', 'Tags', 'Shipping class', 'Images', 'Download limit',
    'Download expiry days', 'Grouped products', 'Upsells', 'Cross-sells', 'External URL', 'Button text', 'Position',
    'Attribute 1 name', 'Attribute 1 value(s)', 'Attribute 1 visible', 'Attribute 1 global', 'Attribute 2 name',
    'Attribute 2 value(s)', 'Attribute 2 visible', 'Attribute 2 global', 'Meta: _wpcom_is_markdown',
    'Download 1 name', 'Download 1 URL', 'Download 2 name', 'Download 2 URL',
  ];

  it('as products: 25 rows, 25 accepted, each variation grouped under its parent product', async () => {
    const source = await run.h.source('products', {
      columns: { item_id: 'SKU', sku: 'SKU', product_id: ['Parent', 'SKU'], product_name: 'Name', product_type: 'Type' },
      ignore_columns: [...unread, 'Sale price', 'Regular price'],
    });
    const before = run.h.sandbox.control.state().products.count;
    const report = await reportOf(await push(source, FILE));
    expect(report.rows).toMatchObject({ read: 25, accepted: 25, rejected: 0, superseded: 0, skipped: 0 });
    expectReconciled(report.rows);
    // The BOM is not part of the first header: "ID" is ignored, not a custom column "\uFEFFID" sent by CSV import.
    expect(report).toMatchObject({ mode: 'bulk', warnings: [] });
    expect(run.h.sandbox.control.state().products.count - before).toBe(25);
    const product = (sku: string) => [...world().products.table.rows()].find((p) => p.item_id === sku);
    expect(product('woo-vneck-tee-red')).toMatchObject({ product_id: 'woo-vneck-tee', product_name: 'V-Neck T-Shirt - Red', product_type: 'variation' });
    expect(product('woo-vneck-tee')).toMatchObject({ product_id: 'woo-vneck-tee', product_type: 'variable' });
    // A quoted type with commas stays one value; SKUs differing only in case are two products.
    expect(product('woo-album')).toMatchObject({ product_type: 'simple, downloadable, virtual' });
    expect(product('Woo-tshirt-logo')?.product_name).toBe('T-Shirt with Logo');
    expect(product('woo-tshirt')?.product_name).toBe('T-Shirt');
  });

  it("as the web shop's store prices: the sale price when there is one, parents without a price skipped", async () => {
    const [webShop = ''] = run.h.sandbox.control.state().stores;
    const source = await run.h.source('product_store', {
      columns: { item_id: 'SKU', current_price: ['Sale price', 'Regular price'], regular_price: 'Regular price' },
      defaults: { store_id: webShop, currency: 'USD' },
      // The variable products (44, 45) and the grouped one (87) carry no price: their variations and members do.
      skip_rows: { when_empty: ['Regular price'] },
      ignore_columns: [...unread, 'Type', 'Name', 'Parent'],
    });
    const report = await reportOf(await push(source, FILE));
    expect(report.rows).toMatchObject({ read: 25, accepted: 22, rejected: 0, superseded: 0, skipped: 3 });
    expectReconciled(report.rows);
    expect(report.warnings).toEqual([]);
    const prices = [...world().productStore.table.rows()].filter((r) => r.store_id === webShop);
    const price = (sku: string) => prices.find((r) => r.item_id === sku);
    expect(price('woo-beanie')).toMatchObject({ current_price: '18', regular_price: '20', currency: 'USD' });
    expect(price('woo-hoodie-red')).toMatchObject({ current_price: '42', regular_price: '45' });
    expect(price('wp-pennant')).toMatchObject({ current_price: '11.05', regular_price: '11.05' });
    expect(['woo-vneck-tee', 'woo-hoodie', 'logo-collection'].map(price)).toEqual([undefined, undefined, undefined]);
  });
});

describe('three Spanish supermarket chains scraped into one file: "3,15 €", "3,45\u00A0€" and "2.99 €" in one column', () => {
  // Currency symbols around a number are read; a point in a comma-decimal column is rejected as ambiguous, with a
  // reason that says so.
  it('as competitor prices: Consum and Supermercados Más accepted, every Dia row refused, none misread', async () => {
    const source = await run.h.source('competitor_prices', {
      // The scrape's date is in the name the file was saved under.
      file_name: '^productos-(?<date>\\d{4}-\\d{2}-\\d{2})\\.csv$',
      timezone: 'Europe/Madrid',
      decimal_separator: ',',
      columns: {
        competitor_name: 'Supermercado',
        observed_at: '{file.date}',
        competitor_sku: 'URL',
        source_url: 'URL',
        regular_price: 'Precio',
        effective_price: 'Precio',
      },
      defaults: { currency: 'EUR' },
      ignore_columns: ['Nombre', 'Marca'],
    });
    const before = run.h.sandbox.control.state().competitor_prices.count;
    const report = await reportOf(await push(source, 'spanish-supermarkets/productos-2024-04-14.csv'));
    // Lines 2-41 Consum ("3,15 €"), 42-81 Supermercados Más ("3,45" and a no-break space before "€"), 82-121 Dia
    // ("2.99 €": a point where the source says the decimal separator is a comma; line 120 "Precio no disponible").
    expect(report.rows).toMatchObject({ read: 120, accepted: 80, rejected: 40, rejected_locally: 40, superseded: 0, skipped: 0 });
    expectReconciled(report.rows);
    expect(run.h.sandbox.control.state().competitor_prices.count - before).toBe(80);
    const rows = [...world().competitorPrices.table.rows()];
    const at = (url: string) => rows.find((r) => r.competitor_sku === url);
    expect(at('https://tienda.consum.es/es/p/detergente-liquido-prendas-delicadas/401356')).toMatchObject({
      competitor_name: 'Consum',
      regular_price: '3.15',
      effective_price: '3.15',
      currency: 'EUR',
      observed_at: '2024-04-13T22:00:00Z',
    });
    expect(at('https://www.supermercadosmas.com/alimentacion/chicles-sin-azucar-fresa-trident-bote-826g/')).toMatchObject({
      competitor_name: 'Supermercados Mas',
      regular_price: '3.45',
    });
    // No Dia price is stored at all, so none can have been read as 299.
    expect(rows.filter((r) => r.competitor_name === 'Dia')).toEqual([]);

    const rejects = await rejectRecords(report.rejectsPath);
    expect(rejects.map((r) => Number(r.line))).toEqual(Array.from({ length: 40 }, (_, i) => 82 + i));
    expect(rejects.every((r) => r.Supermercado === 'Dia' && r.field?.startsWith('regular_price'))).toBe(true);
    const dotted = rejects.find((r) => r.line === '82');
    expect(dotted).toMatchObject({ Precio: '2.99 €' });
    expect(dotted?.code).toMatch(/^decimal_parsing/);
    expect(dotted?.message).toMatch(/ambiguous/i);
    // The hint to set thousands_separator is the wrong fix here (2.99 groups no thousands): it is not given.
    expect(dotted?.message).not.toMatch(/thousands_separator/);
    expect(rejects.find((r) => r.line === '120')).toMatchObject({ Precio: 'Precio no disponible' });
  });
});

describe("a Croatian cash & carry's price list saved from a spreadsheet: an empty row above the header", () => {
  const config = {
    decimal_separator: ',',
    columns: {
      item_id: 'Šifra artikla',
      sku: 'Barkod',
      current_price: ['MPC za vrijeme posebnog oblika prodaje', 'MPC'],
      regular_price: 'MPC',
    },
    ignore_columns: [
      'Naziv artikla', 'Kategorija proizvoda', 'BRAND', 'neto količina', 'Jedinica mjere', 'Cijena za jedinicu mjere',
      'Najniža cijena u posljednjih 30 dana', 'sidrena cijena na 2.5.2025.',
    ],
  };

  // The header found by itself when line 1 names none of the mapped columns (and `header_row: N`); the empty row
  // above it is not data. Each push is forced: the same bytes are pushed by both cases.
  it.each([
    ['found by itself', {}],
    ['at header_row: 2', { header_row: 2 }],
  ] as const)('the header %s: 16 prices accepted, the empty row above it a blank line', async (_how, header) => {
    const [, store = ''] = run.h.sandbox.control.state().stores;
    const source = await run.h.source('product_store', { ...config, ...header, defaults: { store_id: store, currency: 'EUR' } });
    const report = await reportOf(await push(source, 'roto/cjenik-roto.csv', true));
    // A row of empty cells is a blank line, as everywhere: counted as such, neither read nor skipped.
    expect(report.rows).toMatchObject({ read: 16, accepted: 16, rejected: 0, superseded: 0, skipped: 0, blank_lines: 1 });
    expectReconciled(report.rows);
    expect(report.warnings).toEqual([]);
    const prices = [...world().productStore.table.rows()].filter((r) => r.store_id === store);
    // Codes with and without leading zeros, as the list writes them.
    expect(prices.find((r) => r.item_id === '022243')).toMatchObject({ sku: '3859890966012', current_price: '16.69', regular_price: '16.69', currency: 'EUR' });
    expect(prices.find((r) => r.item_id === '9144')).toMatchObject({ current_price: '25.09' });
    expect(prices.find((r) => r.item_id === '022767')).toMatchObject({ current_price: '6.75', regular_price: '6.75' });
  });
});

describe("a drugstore chain's price list workbook: a title above the header, the code column's header merged away", () => {
  const FILE = 'dm/cjenik-dm.xlsx';
  const CLEARANCE = 'MPC za vrijeme posebnog oblika prodaje (Rasprodaja proizvoda koji izlaze iz asortimana)';
  const config = {
    format: 'xlsx',
    pattern: '*.xlsx',
    columns: {
      // "naziv + šifra" spans columns A and B (a merged header cell): the code, in B, is the second column.
      item_id: 'column_2',
      sku: 'barkod',
      // A clearance row has no MPC: its clearance price is the price.
      current_price: [CLEARANCE, 'MPC'],
      regular_price: 'MPC',
    },
    ignore_columns: [
      'naziv + šifra', 'marka', 'kategorija proizvoda', 'neto količina', 'Jedinica mjere', 'Cijena za jedinicu mjere',
      'dostupno samo online', 'Najniža cijena u posljednjih 30 dana prije rasprodaje',
      'sidrena cijena na 2.5.2025. ili na datum ulistanja',
    ],
  };

  // Each case prices another store; each push is forced: the same bytes are pushed by both cases.
  it.each([
    ['found by itself', 2, {}],
    ['at header_row: 3', 3, { header_row: 3 }],
  ] as const)('the header %s: 40 prices accepted, the title line above it skipped', async (_how, storeIndex, header) => {
    const store = run.h.sandbox.control.state().stores[storeIndex] ?? '';
    const source = await run.h.source('product_store', { ...config, ...header, defaults: { store_id: store, currency: 'EUR' } });
    const before = run.h.sandbox.control.state().product_store.count;
    const report = await reportOf(await push(source, FILE, true));
    // Row 1 (the title, merged across the table) is read and skipped; row 2 is empty: no row at all in the workbook.
    expect(report.rows).toMatchObject({ read: 41, accepted: 40, rejected: 0, superseded: 0, skipped: 1, blank_lines: 0 });
    expectReconciled(report.rows);
    expect(report.warnings).toEqual(['the header is on line 3: the 1 line(s) with content above it are skipped, not data']);
    expect(run.h.sandbox.control.state().product_store.count - before).toBe(40);
    const prices = [...world().productStore.table.rows()].filter((r) => r.store_id === store);
    expect(prices.find((r) => r.item_id === '2443342')).toMatchObject({ sku: '3850108023558', current_price: '0.55', regular_price: '0.55', currency: 'EUR' });
    // A clearance row (row 7): the clearance price, and no regular price, as the list writes it.
    const clearance = prices.find((r) => r.item_id === '2420670');
    expect(clearance).toMatchObject({ sku: '3850108023664', current_price: '1.7' });
    expect(clearance?.regular_price ?? null).toBeNull();
    // 13 of the 40 rows are clearance rows: each has a clearance price and no MPC.
    const atFile = prices.filter((r) => r.sku !== null && r.sku !== undefined);
    expect(atFile.filter((r) => (r.regular_price ?? null) === null)).toHaveLength(13);
    // A barcode of 11 digits stays as written.
    expect(prices.find((r) => r.item_id === '2114419')?.sku).toBe('83800047857');
  });

  it('dropped into a CSV source (format: xlsx forgotten): the file fails saying it is a workbook, not a byte it cannot decode', async () => {
    const { format: _format, pattern: _pattern, ...csvConfig } = config;
    const [, , store = ''] = run.h.sandbox.control.state().stores;
    const source = await run.h.source('product_store', { ...csvConfig, defaults: { store_id: store, currency: 'EUR' } });
    const report = await reportOf(await push(source, FILE, true), 'failed');
    expect(report.error).toEqual({
      code: 'NOT_CSV',
      message: 'the file is a zip archive (an Excel .xlsx workbook?), not CSV text: for a workbook, set format: xlsx on the source',
    });
    expect(report.rows).toMatchObject({ sent: 0, accepted: 0 });
  });
});

describe("a US grocery retailer's point-of-sale lines (84.51° Complete Journey): one line per basket and product", () => {
  const FILE = 'completejourney/transactions_sample.csv';

  it('as transactions keyed by basket and product: 150 lines, 150 sales accepted, none merged or lost', async () => {
    const source = await run.h.source('transactions', {
      // No basket of the slice holds a product on two lines, so no key repeats; one that did would be added up by
      // the default duplicate_keys: sum, never lost.
      columns: { transaction_id: '{basket_id}-{product_id}', item_id: 'product_id', revenue: 'sales_value' },
      defaults: { currency: 'USD' },
      ignore_columns: ['household_id', 'retail_disc', 'coupon_disc', 'coupon_match_disc', 'week'],
    });
    const before = run.h.sandbox.control.state().transactions.count;
    const report = await reportOf(await push(source, FILE));
    expect(report.rows).toMatchObject({ read: 150, accepted: 150, merged: 0, rejected: 0, superseded: 0, skipped: 0 });
    expectReconciled(report.rows);
    expect(report.warnings).toEqual([]);
    expect(run.h.sandbox.control.state().transactions.count - before).toBe(150);
    const rows = [...world().transactions.table.rows()];
    const line = (id: string) => rows.find((r) => r.transaction_id === id);
    expect(line('31932241118-13094913')).toMatchObject({
      item_id: '13094913', store_id: '388', quantity: '2', revenue: '11.87', currency: 'USD', transaction_timestamp: '2017-02-18T18:13:10Z',
    });
    // Basket 34204785979 (lines 36 and 113): two products, two transactions.
    expect(line('34204785979-933835')).toMatchObject({ revenue: '3.05' });
    expect(line('34204785979-902172')).toMatchObject({ revenue: '2.99' });
    // Line 52: quantity 0, sales 0 and a coupon of 1.40, sent as written.
    expect(line('31969185576-5978656')).toMatchObject({ quantity: '0', revenue: '0' });
  });
});
