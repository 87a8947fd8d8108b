import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import iconv from 'iconv-lite';
import { FileFormatError } from '../../src/ingest/read/index.ts';
import { GERMAN_ERP_FORMAT } from '../fixtures/german-erp.ts';
import { FIXTURES, drain, failure, source, tempDir, writeTemp } from './support/read-helpers.ts';

const dir = tempDir();

const german = source('product_store', GERMAN_ERP_FORMAT);

describe('a Windows-1252 semicolon file with German headers and decimal commas', () => {
  it('maps, converts and rejects by line', async () => {
    const { rows, rejects, summary } = await drain(join(FIXTURES, 'german-cp1252.csv'), german);
    expect(rows.map((r) => [r.line, r.record])).toEqual([
      [
        2,
        {
          item_id: '4711',
          store_id: '0012',
          current_price: '1.99',
          regular_price: '2.49',
          stock_on_hand: 12,
          price_effective_date: '2026-03-01',
          store_name: 'Köln Hbf',
        },
      ],
      [
        3,
        {
          item_id: '4712',
          store_id: '0012',
          current_price: '1234.50',
          stock_on_hand: 3,
          price_effective_date: '2026-03-02',
          store_name: 'Köln Hbf',
        },
      ],
      [4, { item_id: '4713', store_id: '0013', current_price: '0.5', store_name: 'München Süd' }],
    ]);
    expect(rejects).toEqual([
      expect.objectContaining({
        line: 5,
        field: 'current_price',
        column: 'Preis',
        code: 'decimal_parsing',
        rawFields: ['4714', '0013', 'abc', '', '', '', 'Straße € 1', 'Fehler'],
      }),
    ]);
    expect(summary).toMatchObject({
      complete: true,
      encoding: 'windows-1252',
      delimiter: ';',
      rows: 4,
      accepted: 3,
      rejected: 1,
      lines: 5,
      ignoredColumns: ['Bezeichnung'],
      warnings: [expect.stringContaining('"Bezeichnung"')],
    });
  });

  it('without thousands_separator, 1.234,50 is a reject, not a misread', async () => {
    const { rejects } = await drain(join(FIXTURES, 'german-cp1252.csv'), { ...german, thousands_separator: undefined });
    expect(rejects.map((r) => [r.line, r.code])).toEqual([
      [3, 'decimal_parsing'],
      [5, 'decimal_parsing'],
    ]);
  });

  it.each([
    ['0x80 as the euro sign, not as a control character', 'windows-1252', iconv.encode('item_id,store_id,current_price,store_name\nA,S,1,5 €\n', 'windows-1252'), '5 €'],
    ['ISO-8859-1', 'iso-8859-1', Buffer.from('item_id;store_id;current_price;store_name\nA;S;1;Gr\xfc\xdfe\n', 'latin1'), 'Grüße'],
  ] as const)('reads %s', async (_what, encoding, bytes, storeName) => {
    const { rows } = await drain(writeTemp(dir, bytes), source('product_store', { encoding }));
    expect(rows[0]?.record['store_name']).toBe(storeName);
  });

  it('fails on a byte Windows-1252 leaves undefined, with line and offset', async () => {
    const file = writeTemp(dir, Buffer.from('item_id,store_id,current_price\nA,\x81,1\n', 'latin1'));
    const error = await failure(file, source('product_store', { encoding: 'windows-1252' }));
    expect(error).toMatchObject({ code: 'INVALID_ENCODING', line: 2, byteOffset: 33 });
  });

  it('fails ISO-8859-1 files holding C1 control bytes (they are Windows-1252)', async () => {
    const file = writeTemp(dir, Buffer.from('item_id,store_id,current_price,store_name\nA,S,1,5 \x80\n', 'latin1'));
    const error = await failure(file, source('product_store', { encoding: 'iso-8859-1' }));
    expect(error).toMatchObject({ code: 'INVALID_ENCODING', line: 2 });
    expect((error as Error).message).toContain('Windows-1252');
  });
});

describe('UTF-8 with BOM and CRLF', () => {
  it('strips the BOM, splits CRLF, keeps multi-line quoted values and custom columns', async () => {
    const { rows, summary } = await drain(join(FIXTURES, 'utf8-bom-crlf.csv'), source('products'));
    expect(summary).toMatchObject({ bom: 'utf-8', delimiter: ',', headers: ['item_id', 'sku', 'product_name', 'brand', 'color', 'Größe'] });
    expect(summary.customColumns).toEqual(['color', 'Größe']);
    expect(rows.map((r) => [r.line, r.record])).toEqual([
      [2, { item_id: 'P1', sku: 'SKU-1', product_name: 'Crème brûlée', brand: 'Maison', color: 'red', Größe: 'M' }],
      [3, { item_id: 'P2', sku: 'SKU-2', product_name: 'Tea, green', color: 'blue' }],
      [4, { item_id: 'P3', sku: 'SKU-3', product_name: 'Multi\r\nline', brand: 'Acme', Größe: 'XL' }],
    ]);
    expect(summary.lines).toBe(5);
  });

  it('a UTF-8 BOM wins over a configured Windows-1252, with a warning', async () => {
    const { rows, summary } = await drain(join(FIXTURES, 'utf8-bom-crlf.csv'), source('products', { encoding: 'windows-1252' }));
    expect(rows[0]?.record['product_name']).toBe('Crème brûlée');
    expect(summary.encoding).toBe('utf-8');
    expect(summary.warnings).toEqual([expect.stringContaining('byte-order mark')]);
  });
});

describe('UTF-16', () => {
  it('reads UTF-16LE with BOM, tab-delimited, whatever encoding was configured', async () => {
    const { rows, summary } = await drain(join(FIXTURES, 'utf16le-bom.csv'), source('transactions'));
    expect(summary).toMatchObject({ encoding: 'utf-16le', bom: 'utf-16le', delimiter: '\t', ignoredColumns: ['cashier'] });
    expect(rows.map((r) => r.record)).toEqual([
      { transaction_id: 'T1', item_id: 'A1', transaction_timestamp: '2026-03-01T10:00:00Z', quantity: '2', price: '1.50', is_promo: true },
      { transaction_id: 'T2', item_id: 'A2', transaction_timestamp: '2026-03-01T11:30:00Z', quantity: '1', price: '2', is_promo: false },
    ]);
  });

  it('reads UTF-16BE without BOM when configured, across chunk boundaries', async () => {
    const text = 'item_id,store_id,current_price,store_name\n' + 'A,S,1,Ä😀\n'.repeat(50);
    const bytes = Buffer.from(text, 'utf16le').swap16();
    const file = writeTemp(dir, bytes);
    const { rows } = await drain(file, source('product_store', { encoding: 'utf-16be' }), { highWaterMark: 7 });
    expect(rows).toHaveLength(50);
    expect(rows[49]?.record['store_name']).toBe('Ä😀');
  });

  it('fails on an unpaired surrogate with its offset', async () => {
    const good = Buffer.from('item_id,store_id,current_price\nA,S,1\n', 'utf16le');
    const file = writeTemp(dir, Buffer.concat([Buffer.from([0xff, 0xfe]), good, Buffer.from([0x00, 0xd8, 0x41, 0x00])]));
    const error = await failure(file, source('product_store'));
    expect(error).toMatchObject({ code: 'INVALID_ENCODING', line: 3, byteOffset: 2 + good.length });
  });

  it('fails on an odd trailing byte', async () => {
    const file = writeTemp(dir, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('item_id,store_id,current_price\nA,S,1\n', 'utf16le'), Buffer.from([0x41])]));
    expect(await failure(file, source('product_store'))).toMatchObject({ code: 'INVALID_ENCODING' });
  });
});

describe('invalid UTF-8', () => {
  it('fails the file with the line and byte offset of the bad byte', async () => {
    const error = await failure(join(FIXTURES, 'invalid-utf8.csv'), source('product_store'));
    expect(error).toBeInstanceOf(FileFormatError);
    expect(error).toMatchObject({ code: 'INVALID_ENCODING', line: 3, byteOffset: 46 });
    expect((error as Error).message).toContain('0xE4');
  });

  it('finds the offset when the bad byte sits far into the file, split across chunks', async () => {
    const head = 'item_id,store_id,current_price,store_name\n' + 'A,S,1,Grüße\n'.repeat(1000);
    const bytes = Buffer.concat([Buffer.from(head), Buffer.from([0xe2, 0x82]), Buffer.from(',x\n')]);
    const file = writeTemp(dir, bytes);
    const error = await failure(file, source('product_store'), { highWaterMark: 1000 });
    expect(error).toMatchObject({ code: 'INVALID_ENCODING', line: 1002, byteOffset: Buffer.byteLength(head) });
  });

  it('accepts multi-byte characters split at every chunk boundary', async () => {
    const text = 'item_id,store_id,current_price,store_name\n' + 'A,S,1,€😀ü\n'.repeat(20);
    const { rows } = await drain(writeTemp(dir, text), source('product_store'), { highWaterMark: 1 });
    expect(rows.map((r) => r.record['store_name'])).toEqual(Array(20).fill('€😀ü'));
  });

  it('fails a file truncated inside a sequence, and a NUL byte with a UTF-16 hint', async () => {
    const truncated = Buffer.concat([Buffer.from('item_id,store_id,current_price\nA,S,1\n'), Buffer.from([0xe2, 0x82])]);
    expect(await failure(writeTemp(dir, truncated), source('product_store'))).toMatchObject({ code: 'INVALID_ENCODING', line: 3 });
    const nul = await failure(writeTemp(dir, 'item_id,store_id,current_price\nA,\0,1\n'), source('product_store'));
    expect(nul).toMatchObject({ code: 'INVALID_ENCODING', line: 2, byteOffset: 33 });
    expect((nul as Error).message).toContain('UTF-16');
  });

  it('fails on a BOM in the middle of the file (two files concatenated)', async () => {
    const one = 'item_id,store_id,current_price\nA,S,1\n';
    const file = writeTemp(dir, Buffer.concat([Buffer.from('\uFEFF' + one), Buffer.from('\uFEFF' + one)]));
    expect(await failure(file, source('product_store'))).toMatchObject({ code: 'UNEXPECTED_BOM', line: 3, byteOffset: 3 + one.length });
  });
});
