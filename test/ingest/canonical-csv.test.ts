import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ProductWrite, TransactionWrite } from '../../src/api/schemas/index.ts';
import { CanonicalCsvWriter, canonicalColumns, writeCanonicalCsv } from '../../src/ingest/write/canonical-csv.ts';
import { drain, source, tempDir } from './support/read-helpers.ts';

const dir = tempDir();
let n = 0;
const target = () => join(dir, `canonical-${++n}.csv`);

describe('canonical CSV', () => {
  it('writes the API field names, RFC 4180 quoting, CRLF, UTF-8 without BOM', async () => {
    const path = target();
    const rows: TransactionWrite[] = [
      { transaction_id: 'T1', item_id: 'A,1', transaction_timestamp: '2026-03-01T10:00:00Z', price: '1.50', is_promo: true },
      { transaction_id: 'T2', item_id: 'say "hi"', transaction_timestamp: '2026-03-01T10:00:00Z', currency: '€' },
    ];
    const result = await writeCanonicalCsv(rows, path, { entity: 'transactions' });
    const bytes = readFileSync(path);
    expect(bytes.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf]))).toBe(false);
    expect(bytes.toString('utf8')).toBe(
      'transaction_id,item_id,transaction_timestamp,product_id,store_id,quantity,price,revenue,currency,is_promo\r\n' +
        'T1,"A,1",2026-03-01T10:00:00Z,,,,1.50,,,true\r\n' +
        'T2,"say ""hi""",2026-03-01T10:00:00Z,,,,,,€,\r\n',
    );
    expect(result).toEqual({ path, rows: 2, bytes: bytes.length });
  });

  it('round-trips through csv-parse: every value as written, empty meaning not set', async () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 20 });
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record(
            {
              item_id: text.filter((s) => s !== ''),
              sku: text.filter((s) => s !== ''),
              brand: fc.option(text, { nil: undefined }),
              colour: fc.option(text, { nil: undefined }),
            },
            { requiredKeys: ['item_id', 'sku'] },
          ),
          { maxLength: 20 },
        ),
        async (products) => {
          const path = target();
          await writeCanonicalCsv(products as ProductWrite[], path, { entity: 'products', customColumns: ['colour'] });
          const parsed = parse<Record<string, string>>(readFileSync(path), { columns: true });
          expect(parsed).toHaveLength(products.length);
          parsed.forEach((row, i) => {
            const product = products[i]!;
            expect(row['item_id']).toBe(product.item_id);
            expect(row['sku']).toBe(product.sku);
            expect(row['brand']).toBe(product.brand ?? '');
            expect(row['colour']).toBe(product.colour ?? '');
          });
        },
      ),
      { numRuns: 100 },
    );
  });

  it('round-trips through the reader as records equal to those written', async () => {
    const products: ProductWrite[] = [
      { item_id: 'P1', sku: 'S1', product_name: 'Multi\r\nline, "quoted"', Farbe: 'rot' },
      { item_id: 'P2', sku: 'S2', brand: 'Acme' },
    ];
    const path = target();
    await writeCanonicalCsv(products, path, { entity: 'products', customColumns: ['Farbe'] });
    const { rows, summary } = await drain(path, source('products'));
    expect(rows.map((r) => r.record)).toEqual(products);
    expect(summary.customColumns).toEqual(['Farbe']);
  });

  it('reports the physical lines of each record', async () => {
    const writer = await CanonicalCsvWriter.create(target(), { entity: 'products' });
    expect(await writer.write({ item_id: 'A', sku: 'A' })).toEqual({ line: 2, endLine: 2 });
    expect(await writer.write({ item_id: 'B', sku: 'B', product_name: 'x\r\ny\nz' })).toEqual({ line: 3, endLine: 5 });
    expect(await writer.write({ item_id: 'C', sku: 'C' })).toEqual({ line: 6, endLine: 6 });
    await writer.commit();
  });

  it('is invisible under its name until committed, and abort leaves nothing', async () => {
    const path = target();
    const writer = await CanonicalCsvWriter.create(path, { entity: 'products' });
    for (let i = 0; i < 5000; i++) await writer.write({ item_id: `A${i}`, sku: `S${i}` });
    const visible = () => readdirSync(dir).filter((f) => f.includes(`canonical-${n}.csv`));
    expect(visible()).toEqual([expect.stringMatching(/^\.canonical-\d+\.csv\.\d+-[0-9a-f]+\.tmp$/)]);
    await writer.abort();
    expect(visible()).toEqual([]);
    const again = await CanonicalCsvWriter.create(path, { entity: 'products' });
    await again.write({ item_id: 'A', sku: 'S' });
    await again.commit();
    expect(visible()).toEqual([`canonical-${n}.csv`]);
  });

  it('refuses a key outside the header instead of dropping it, and bad custom columns', async () => {
    const writer = await CanonicalCsvWriter.create(target(), { entity: 'products', customColumns: ['colour'] });
    await expect(writer.write({ item_id: 'A', sku: 'A', size: 'M' })).rejects.toThrow('size is not a column');
    await writer.abort();
    expect(() => canonicalColumns({ entity: 'products', customColumns: ['sku'] })).toThrow('repeated');
    expect(() => canonicalColumns({ entity: 'transactions', customColumns: ['x'] })).toThrow('no custom columns');
  });
});
