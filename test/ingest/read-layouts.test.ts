/**
 * Files as people save them (issue 28, points 2 to 4), read by every record source alike: the header under a
 * letterhead or over two rows, notes under the table, numbers with currencies and per-column formats, columns without
 * a name or by position. CSV through the fast lane (no quote) and through csv-parse (a quote on line 1), and workbooks.
 * The same cases pushed to the sandbox: test/integration/spreadsheet-exports.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { tempDir, drain, failure, source, writeTemp } from './support/read-helpers.ts';
import { workbook } from './support/workbooks.ts';

const dir = tempDir();
const STORE = '7b0d6a8e-8f57-4a3c-9d0a-2f3b6c1e5d4a';

/** The same rows as CSV without a quote (fast lane), as CSV with a quote in its first line (csv-parse), and as a workbook. */
async function asFiles(rows: readonly (readonly string[])[]): Promise<{ kind: string; file: string; format: 'csv' | 'xlsx' }[]> {
  const csv = (quote: boolean) =>
    rows.map((r, i) => r.map((c) => (quote && i === 0 && c !== '' ? `"${c}"` : c)).join(';')).join('\n') + '\n';
  return [
    { kind: 'csv, fast lane', file: writeTemp(dir, csv(false)), format: 'csv' },
    { kind: 'csv, parser', file: writeTemp(dir, csv(true)), format: 'csv' },
    { kind: 'xlsx', file: await workbook(dir, `w${Math.random().toString(36).slice(2)}.xlsx`, [{ name: 'Preise', rows }]), format: 'xlsx' },
  ];
}

const LETTERHEAD: string[][] = [
  ['Hofladen Sonnenfeld'],
  ['Preisliste Frühjahr 2026'],
  [],
  ['Art.-Nr.', 'Bezeichnung', 'Preis', ''],
  ['', '', 'brutto', 'Einheit'],
  ['A1', 'Äpfel', '2,90', 'kg'],
  ['A2', 'Birnen', '3,40', 'kg'],
  [],
  ['', 'Lieferung frei Haus ab 50 €'],
  ['', 'Alle Preise inkl. MwSt.', '', ''],
];

describe('a letterhead above a header over two rows, notes under the table', () => {
  const config = (format: 'csv' | 'xlsx', extra: Record<string, unknown> = {}) =>
    source('product_store', {
      format,
      delimiter: ';',
      decimal_separator: ',',
      header_rows: 2,
      columns: { item_id: 'Art.-Nr.', current_price: 'Preis brutto' },
      ignore_columns: ['Bezeichnung', 'column_4'],
      defaults: { store_id: STORE },
      ...extra,
    });

  it('finds the header by itself: lines above it and the notes under the table are skipped, never rejected', async () => {
    for (const { kind, file, format } of await asFiles(LETTERHEAD)) {
      const { rows, rejects, summary } = await drain(file, config(format));
      expect({ kind, rejects }).toEqual({ kind, rejects: [] });
      expect(rows.map((r) => [r.line, r.record]), kind).toEqual([
        [6, { item_id: 'A1', store_id: STORE, current_price: '2.90' }],
        [7, { item_id: 'A2', store_id: STORE, current_price: '3.40' }],
      ]);
      // Two letterhead lines and two notes are skipped rows; the blank lines are blank lines.
      expect(summary, kind).toMatchObject({ complete: true, headerLine: 4, headerEndLine: 5, rows: 6, accepted: 2, rejected: 0, skipped: 4 });
      expect(summary.headers, kind).toEqual(['Art.-Nr.', 'Bezeichnung', 'Preis brutto', 'Einheit']);
      expect(summary.warnings, kind).toContain('the header is on line 4-5: the 2 line(s) with content above it are skipped, not data');
    }
  });

  it('a letterhead line holding a comma above a ";" table: the delimiter is the table\'s', async () => {
    const file = writeTemp(dir, `Preisliste Filiale 0204, Stand 01.07.2025\n\nitem_id;store_id;current_price\nA1;${STORE};1,99\nA2;${STORE};2,49\n`);
    const { rows, summary } = await drain(file, source('product_store', { decimal_separator: ',' }));
    expect(rows.map((r) => [r.line, r.record['current_price']])).toEqual([[4, '1.99'], [5, '2.49']]);
    expect(summary).toMatchObject({ headerLine: 3, skipped: 1 });
    // A comma table whose first line holds a comma stays a comma table.
    const commas = writeTemp(dir, `item_id,store_id,current_price\nA1,${STORE},1.99\n`);
    expect((await drain(commas, source('product_store'))).rows).toHaveLength(1);
  });

  it('takes header_row as said, and an unnamed column by its position', async () => {
    const rows = LETTERHEAD.map((r, i) => (i === 4 ? ['', '', 'brutto', ''] : r));
    for (const { kind, file, format } of await asFiles(rows)) {
      const products = source('products', { format, delimiter: ';', header_row: 4, header_rows: 2, columns: { item_id: 'Art.-Nr.', sku: 'Art.-Nr.', product_name: 'Bezeichnung', unit: 'column_4' }, ignore_columns: ['Preis brutto'] });
      const read = await drain(file, products);
      expect(read.rejects, kind).toEqual([]);
      expect(read.rows.map((r) => r.record), kind).toEqual([
        { item_id: 'A1', sku: 'A1', product_name: 'Äpfel', unit: 'kg' },
        { item_id: 'A2', sku: 'A2', product_name: 'Birnen', unit: 'kg' },
      ]);
      expect(read.summary.customColumns, kind).toEqual(['unit']);
    }
  });

  it('a note of one cell written without delimiters under a CSV table is skipped, whatever its column', async () => {
    const file = writeTemp(dir, 'Art.-Nr.;Preis\nA1;2,90\nLieferung frei Haus ab 50 €\n');
    const { rows, rejects, summary } = await drain(file, config('csv', { header_rows: 1, columns: { item_id: 'Art.-Nr.', current_price: 'Preis' }, ignore_columns: [] }));
    expect(rows).toHaveLength(1);
    expect(rejects).toEqual([]);
    expect(summary).toMatchObject({ rows: 2, skipped: 1 });
  });

  it('a header_row on which no row starts fails the file with what to check', async () => {
    const [csv] = await asFiles(LETTERHEAD);
    expect(await failure(csv?.file ?? '', config('csv', { header_row: 3 }))).toMatchObject({ code: 'HEADER_NOT_FOUND', line: 3 });
    expect(await failure(csv?.file ?? '', config('csv', { header_row: 99 }))).toMatchObject({ code: 'HEADER_NOT_FOUND' });
  });

  it('a note in the middle of the table is read as a row (rejected), not skipped', async () => {
    const rows = [...LETTERHEAD.slice(0, 6), ['Lieferung frei Haus ab 50 €'], ['', 'Nur solange der Vorrat reicht', '', ''], LETTERHEAD[6] as string[]];
    for (const { kind, file, format } of await asFiles(rows)) {
      const { rejects, summary } = await drain(file, config(format));
      expect(rejects.map((r) => r.line), kind).toEqual([7, 8]);
      expect(summary, kind).toMatchObject({ accepted: 2, rejected: 2, skipped: 2 });
    }
  });

  it('a file whose lines name no mapped column still fails on line 1 with the mapping named', async () => {
    const file = writeTemp(dir, 'Hofladen\nArtikel;Preis\nA1;2,90\n');
    expect(await failure(file, config('csv', { header_rows: 1 }))).toMatchObject({ code: 'NO_KNOWN_COLUMNS', line: 1 });
  });

  it('the header is looked for in the first 50 lines only', async () => {
    const far = `${'Briefkopf\n'.repeat(50)}Art.-Nr.;Preis\nA1;2,90\n`;
    expect(await failure(writeTemp(dir, far), config('csv', { header_rows: 1, columns: { item_id: 'Art.-Nr.', current_price: 'Preis' } }))).toMatchObject({ code: 'NO_KNOWN_COLUMNS' });
    const near = `${'Briefkopf\n'.repeat(49)}Art.-Nr.;Preis\nA1;2,90\n`;
    const { rows, summary } = await drain(writeTemp(dir, near), config('csv', { header_rows: 1, columns: { item_id: 'Art.-Nr.', current_price: 'Preis' } }));
    expect(rows).toHaveLength(1);
    expect(summary).toMatchObject({ headerLine: 50, skipped: 49 });
  });
});

describe('numbers as people write them, a format per column', () => {
  it('currencies, a trailing minus, spaces grouping thousands; a point in one column and a comma in another', async () => {
    const rows: string[][] = [
      ['sku', 'store', 'price', 'cost', 'stock'],
      ['A1', 'S', '0,90 €', 'EUR 0.41', '1 200'],
      ['A2', 'S', '1 299,00 kr', '1,050.00', '3-'],
      ['A3', 'S', '1\u202F299,50', '12.90-', '0'],
      ['A4', 'S', '1.50', '1.5', '1'],
    ];
    for (const { kind, file, format } of await asFiles(rows)) {
      const src = source('product_store', {
        format,
        delimiter: ';',
        decimal_separator: ',',
        columns: { item_id: 'sku', store_id: 'store', current_price: 'price', unit_cost: 'cost', stock_on_hand: 'stock' },
        number_format: { unit_cost: { decimal_separator: '.', thousands_separator: ',' } },
      });
      const read = await drain(file, src);
      expect(read.rows.map((r) => r.record), kind).toEqual([
        { item_id: 'A1', store_id: 'S', current_price: '0.90', unit_cost: '0.41', stock_on_hand: 1200 },
        { item_id: 'A2', store_id: 'S', current_price: '1299.00', unit_cost: '1050.00', stock_on_hand: -3 },
        { item_id: 'A3', store_id: 'S', current_price: '1299.50', unit_cost: '-12.90' , stock_on_hand: 0 },
      ]);
      expect(read.rejects, kind).toHaveLength(1);
      const reject = read.rejects[0];
      expect(reject, kind).toMatchObject({ line: 5, field: 'current_price', code: 'decimal_parsing' });
      expect(reject?.message, kind).toMatch(/"1\.50" is ambiguous/);
      expect(reject?.message, kind).not.toMatch(/set thousands_separator/);
    }
  });

  it("a workbook's number cells are numbers in a column whose number_format differs from the source's", async () => {
    const file = await workbook(dir, 'numbers.xlsx', [{ name: 'P', rows: [['sku', 'store', 'price', 'cost'], ['A1', 'S', 2.5, 1.25]] }]);
    const src = source('product_store', {
      format: 'xlsx',
      decimal_separator: ',',
      columns: { item_id: 'sku', store_id: 'store', current_price: 'price', unit_cost: 'cost' },
      number_format: { unit_cost: { decimal_separator: '.', thousands_separator: ',' } },
    });
    const { rows, rejects } = await drain(file, src);
    expect(rejects).toEqual([]);
    expect(rows[0]?.record).toEqual({ item_id: 'A1', store_id: 'S', current_price: '2.5', unit_cost: '1.25' });
  });

  it('number_format for a field that is no number fails the source', async () => {
    const file = writeTemp(dir, 'item_id;store_id;current_price\nA;S;1\n');
    await expect(drain(file, source('product_store', { number_format: { item_id: { decimal_separator: ',' } } }))).rejects.toThrow(/number_format\.item_id/);
  });
});

describe('columns by position', () => {
  it('an unnamed column is column_N; a header naming a column column_N keeps the name', async () => {
    const file = writeTemp(dir, 'item_id,,current_price,column_2\nA,S1,1.5,x\n');
    const { rows, summary } = await drain(file, source('product_store', { columns: { store_id: 'column_2' }, ignore_columns: ['column_4'] }));
    // column_2 is the header named so (the fourth column), not the second position.
    expect(rows[0]?.record).toEqual({ item_id: 'A', store_id: 'x', current_price: '1.5' });
    expect(summary.ignoredColumns).toEqual(['(column 2)']);
  });

  it('any column by its position, and an implicit column already read by position is not read twice', async () => {
    const file = writeTemp(dir, 'item_id,Filiale,current_price,regular_price\nA,S1,1.5,2.0\n');
    const { rows, summary } = await drain(file, source('product_store', { columns: { store_id: 'column_2', current_price: 'column_4' } }));
    expect(rows[0]?.record).toEqual({ item_id: 'A', store_id: 'S1', current_price: '2.0' });
    expect(summary.fields).not.toContain('regular_price');
    expect(summary.ignoredColumns).toEqual(['current_price']);
  });
});
