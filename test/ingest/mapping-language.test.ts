/**
 * The mapping language of a source (docs/mapping.md), one feature per test, through the reader as a push reads a
 * file: templates, file name groups, fallbacks, maps, null markers, ignored columns, fill-down, skipped rows, time
 * zones, two-digit years, whole numbers, Excel's apostrophe, no second route into a mapped field, every problem of
 * a row.
 */
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { FileFormatError, readRows } from '../../src/ingest/read/index.ts';
import { drain, failure, source, tempDir, writeTemp } from './support/read-helpers.ts';

const dir = tempDir();
const STORE = '52d68118-0237-4ab7-978c-a8c486ecca84';

async function named(name: string, content: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

describe('templates, file name groups and fallbacks', () => {
  it('builds a key from two columns and takes a store and a date from the file name', async () => {
    const file = await named('0204-2025-07-03.csv', 'InvoiceNo,StockCode,Quantity,UnitPrice\n536365,85123A,6,2.55\n536365,71053,6,3.39\n');
    const src = source('transactions', {
      file_name: '^(?<store>\\d{4})-(?<date>\\d{4}-\\d{2}-\\d{2})\\.csv$',
      columns: {
        transaction_id: '{InvoiceNo}-{StockCode}',
        item_id: 'StockCode',
        store_id: '{file.store}',
        transaction_timestamp: '{file.date}',
        quantity: 'Quantity',
        price: 'UnitPrice',
      },
    });
    const { rows } = await drain(file, src);
    expect(rows.map((r) => r.record)).toEqual([
      { transaction_id: '536365-85123A', item_id: '85123A', store_id: '0204', transaction_timestamp: '2025-07-03T00:00:00Z', quantity: '6', price: '2.55' },
      { transaction_id: '536365-71053', item_id: '71053', store_id: '0204', transaction_timestamp: '2025-07-03T00:00:00Z', quantity: '6', price: '3.39' },
    ]);
  });

  it('a template with an empty cell is empty: the key is missing, never "536365-"', async () => {
    const file = writeTemp(dir, 'InvoiceNo,StockCode,When\n536365,,2026-01-01T10:00:00Z\n');
    const src = source('transactions', { columns: { transaction_id: '{InvoiceNo}-{StockCode}', item_id: 'InvoiceNo', transaction_timestamp: 'When' } });
    const { rejects } = await drain(file, src);
    expect(rejects[0]).toMatchObject({ field: 'transaction_id', code: 'missing', message: 'transaction_id is required: no value in {InvoiceNo}-{StockCode}' });
  });

  it('{line} and {file.name} are there without a file_name pattern', async () => {
    const file = await named('kasse 3.csv', 'item,when\nA,2026-01-01T10:00:00Z\n');
    const src = source('transactions', { columns: { transaction_id: '{file.name}:{line}', item_id: 'item', transaction_timestamp: 'when' } });
    expect((await drain(file, src)).rows[0]?.record).toMatchObject({ transaction_id: 'kasse 3.csv:2' });
  });

  it('a file whose name does not match file_name fails as a whole', async () => {
    const file = await named('prices.csv', 'item_id,store_id,current_price\nA,S,1\n');
    const error = await failure(file, source('product_store', { file_name: '^(?<store>\\d{4})\\.csv$' }));
    expect(error).toBeInstanceOf(FileFormatError);
    expect(error).toMatchObject({ code: 'FILE_NAME_MISMATCH' });
  });

  it('a list of columns takes the first non-empty one (a promotion row with only a special price)', async () => {
    const file = writeTemp(dir, `Item,Price,SpecialPrice\nA,1.99,\nB,,0.99\nC,,\n`);
    const src = source('product_store', { columns: { item_id: 'Item', current_price: ['Price', 'SpecialPrice'] }, defaults: { store_id: STORE } });
    const { rows, rejects } = await drain(file, src);
    expect(rows.map((r) => r.record.current_price)).toEqual(['1.99', '0.99']);
    expect(rejects[0]).toMatchObject({ line: 4, field: 'current_price', code: 'missing', message: 'current_price is required: no value in Price or SpecialPrice' });
  });
});

describe('maps, null markers and cell cleaning', () => {
  it('maps store codes to store ids; an unmapped code is a reject naming the code', async () => {
    const file = writeTemp(dir, `item_id,store,current_price\nA,0204,1\nB,0999,1\n`);
    const src = source('product_store', { columns: { store_id: 'store' }, maps: { store_id: { '0204': STORE } } });
    const { rows, rejects } = await drain(file, src);
    expect(rows[0]?.record).toMatchObject({ store_id: STORE });
    expect(rejects[0]).toMatchObject({ line: 3, field: 'store_id', code: 'unmapped_value', message: '"0999" is not in maps.store_id' });
  });

  it('a map file is read when the config is loaded', async () => {
    const mapFile = join(dir, 'stores.csv');
    await writeFile(mapFile, `\uFEFFcode;store_id\r\n0204;${STORE}\r\n`);
    const file = writeTemp(dir, `item_id,store_id,current_price\nA,0204,1\n`);
    const { rows } = await drain(file, source('product_store', { maps: { store_id: { map_file: mapFile } } }));
    expect(rows[0]?.record).toMatchObject({ store_id: STORE });
  });

  it('placeholders are empty cells (#N/A is never sent as data); null_values replaces the list', async () => {
    const file = writeTemp(dir, 'item_id,sku,product_type,brand\nA,A,#N/A,n/a\nB,B,-,NULL\nC,C,Toys,k.A.\n');
    expect((await drain(file, source('products'))).rows.map((r) => r.record)).toEqual([
      { item_id: 'A', sku: 'A' },
      { item_id: 'B', sku: 'B' },
      { item_id: 'C', sku: 'C', product_type: 'Toys', brand: 'k.A.' },
    ]);
    const custom = await drain(file, source('products', { null_values: ['k.A.'] }));
    expect(custom.rows.map((r) => r.record.brand)).toEqual(['n/a', 'NULL', undefined]);
  });

  it("removes Excel's text apostrophe from numbers and codes, keeps one before words, shows the cell as it was", async () => {
    const file = writeTemp(dir, "item_id,sku,product_name,product_type\n'7350177880091,'0204,'Tis the season,x\nB,B,x,'" + 'x'.repeat(1001) + '\n');
    const { rows, rejects } = await drain(file, source('products'));
    expect(rows[0]?.record).toMatchObject({ item_id: '7350177880091', sku: '0204', product_name: "'Tis the season" });
    expect(rejects[0]?.rawFields[3]?.startsWith("'x")).toBe(true);
  });

  it('whole numbers take integral decimals (0.0, 12.000), never a fraction', async () => {
    const file = writeTemp(dir, `item_id,store_id,current_price,stock_on_hand\nA,${STORE},1,0.0\nB,${STORE},1,12.000\nC,${STORE},1,12.5\n`);
    const { rows, rejects } = await drain(file, source('product_store'));
    expect(rows.map((r) => r.record.stock_on_hand)).toEqual([0, 12]);
    expect(rejects[0]).toMatchObject({ line: 4, field: 'stock_on_hand', code: 'int_parsing' });
    const comma = writeTemp(dir, `item_id;store_id;current_price;stock_on_hand\nA;${STORE};1,5;3,00\n`);
    expect((await drain(comma, source('product_store', { decimal_separator: ',' }))).rows[0]?.record.stock_on_hand).toBe(3);
  });
});

describe('columns that are not data, continuation rows, rows to skip', () => {
  const shopify = [
    'Handle,Title,Vendor,Variant SKU,Variant Price,Body (HTML),Image Src',
    `tee,Classic Tee,Acme,TEE-S,10.00,<p>${'long '.repeat(300)}</p>,a.jpg`,
    'tee,,,TEE-M,10.00,,',
    'tee,,,,,,b.jpg',
    'mug,Mug,Acme,MUG-1,5.00,,c.jpg',
  ].join('\n');

  it('ignore_columns are never read; fill_down gives continuation rows the value above; skip_rows counts, not rejects', async () => {
    const file = writeTemp(dir, `${shopify}\n`);
    const src = source('products', {
      columns: { item_id: 'Variant SKU', sku: 'Variant SKU', product_id: 'Handle', product_name: 'Title', brand: 'Vendor' },
      ignore_columns: ['Body (HTML)', 'Image Src', 'Variant Price'],
      fill_down: ['Title', 'Vendor'],
      skip_rows: { when_empty: ['Variant SKU'] },
    });
    const { rows, rejects, summary } = await drain(file, src);
    expect(rejects).toEqual([]);
    expect(rows.map((r) => r.record)).toEqual([
      { item_id: 'TEE-S', sku: 'TEE-S', product_id: 'tee', product_name: 'Classic Tee', brand: 'Acme' },
      { item_id: 'TEE-M', sku: 'TEE-M', product_id: 'tee', product_name: 'Classic Tee', brand: 'Acme' },
      { item_id: 'MUG-1', sku: 'MUG-1', product_id: 'mug', product_name: 'Mug', brand: 'Acme' },
    ]);
    expect(summary).toMatchObject({ rows: 4, accepted: 3, rejected: 0, skipped: 1, customColumns: [] });
    expect(summary.warnings).toEqual([]);
  });

  it('a skip_rows column the file lacks fails the file (every row would look empty)', async () => {
    const file = writeTemp(dir, `${shopify}\n`);
    const error = await failure(file, source('products', { columns: { item_id: 'Handle', sku: 'Handle' }, skip_rows: { when_empty: ['SKU'] } }));
    expect(error).toMatchObject({ code: 'MISSING_COLUMNS' });
  });

  it('a column the mapping uses is never read again through a field of its name (no second route)', async () => {
    // "sku" feeds item_id; the sku field is not also filled from it. "store_id" is mapped from "Filiale": the file's
    // own store_id column is not a fallback.
    const file = writeTemp(dir, `sku,Filiale,store_id,current_price\nA-1,${STORE},other,1\n`);
    const src = source('product_store', { columns: { item_id: 'sku', store_id: 'Filiale' } });
    const { rows, summary } = await drain(file, src);
    expect(rows[0]?.record).toEqual({ item_id: 'A-1', store_id: STORE, current_price: '1' });
    expect(summary.ignoredColumns).toEqual(['store_id']);
  });
});

describe('dates and time zones', () => {
  it('reads two-digit years (00-68 -> 20xx, 69-99 -> 19xx)', async () => {
    const file = writeTemp(dir, 'id,item,when\nA,X,12/1/10 8:26\nB,X,1/31/69 23:59\nC,X,13/1/10 8:26\n');
    const src = source('transactions', { date_format: 'M/D/YY H:mm', columns: { transaction_id: 'id', item_id: 'item', transaction_timestamp: 'when' } });
    const { rows, rejects } = await drain(file, src);
    expect(rows.map((r) => r.record.transaction_timestamp)).toEqual(['2010-12-01T08:26:00Z', '1969-01-31T23:59:00Z']);
    expect(rejects[0]).toMatchObject({ line: 4, code: 'datetime_parsing' });
  });

  it('converts wall-clock times of a time zone to UTC, deciding the DST gap and overlap, keeping offsets as written', async () => {
    const file = writeTemp(
      dir,
      [
        'id,item,when',
        'winter,X,2026-01-15 10:00',
        'summer,X,2026-07-15 10:00',
        'gap,X,2026-03-29 02:30', // does not exist in Berlin: read with the offset before the change
        'overlap,X,2026-10-25 02:30', // happens twice: the first (still summer time)
        'offset,X,2026-07-15T10:00:00+02:00',
        'midnight,X,2026-07-15',
      ].join('\n'),
    );
    const src = source('transactions', { timezone: 'Europe/Berlin', columns: { transaction_id: 'id', item_id: 'item', transaction_timestamp: 'when' } });
    const { rows } = await drain(file, src);
    expect(Object.fromEntries(rows.map((r) => [r.record.transaction_id, r.record.transaction_timestamp]))).toEqual({
      winter: '2026-01-15T09:00:00Z',
      summer: '2026-07-15T08:00:00Z',
      gap: '2026-03-29T01:30:00Z',
      overlap: '2026-10-25T00:30:00Z',
      offset: '2026-07-15T10:00:00+02:00',
      midnight: '2026-07-14T22:00:00Z',
    });
  });
});

describe('rejects', () => {
  it('list every problem of a row, the first in schema order first', async () => {
    const file = writeTemp(dir, 'item_id,store_id,current_price,stock_on_hand\nA,,abc,1.5\n');
    const { rejects } = await drain(file, source('product_store'));
    expect(rejects[0]?.errors.map((e) => `${e.field}:${e.code}`)).toEqual(['store_id:missing', 'current_price:decimal_parsing', 'stock_on_hand:int_parsing']);
  });

  it('file_name is matched against the name the file was dropped under, not its name in processing/', async () => {
    const path = await named('17-0204.csv', 'item_id,current_price\nA,1\n');
    const src = source('product_store', { file_name: '^(?<store>\\d{4})\\.csv$', columns: { store_id: '{file.store}' } });
    const reader = await readRows(path, src, { name: '0204.csv' });
    const records = [];
    for await (const outcome of reader) if (outcome.kind === 'row') records.push(outcome.record);
    expect(records).toEqual([{ item_id: 'A', store_id: '0204', current_price: '1' }]);
  });
});
