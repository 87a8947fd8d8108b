/**
 * Cells taken as they are (delta push's first pass hashes such a key from its bytes, src/ingest/delta/fast/line-scan.ts):
 * CellCleaner.keeps says of bytes exactly what the cleaner does to their text, and RowMapper.verbatim offers the key's
 * columns only for a mapping that converts them as they are, and a conversion that then gives those very cells.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BUSINESS_KEY_FIELDS } from '../../src/api/schemas/index.ts';
import { DEFAULT_NULL_VALUES } from '../../src/config/mapping-schema.ts';
import { cellCleaner } from '../../src/ingest/read/clean-cell.ts';
import { compileSource, readRows } from '../../src/ingest/read/index.ts';
import { source, tempDir, writeTemp } from './support/read-helpers.ts';

const dir = tempDir();

describe('CellCleaner.keeps', () => {
  it('holds for the bytes of an ASCII cell exactly when the cleaner returns its text as it is', () => {
    const char = fc.constantFrom('a', 'Z', '0', '7', '-', '#', '/', "'", ' ', '\t', '\v', '!', 'é', '\u00a0', 'n', 'U', 'L', 'A', 'N', '?');
    const cell = fc.oneof(
      fc.array(char, { maxLength: 9 }).map((chars) => chars.join('')),
      fc.constantFrom(...DEFAULT_NULL_VALUES, 'null', 'nUlL', 'NULLS', 'N/AX', "'0042", "'Tis", '-1', 'ITEM-0000001', 'S1', ''),
    );
    for (const nulls of [[...DEFAULT_NULL_VALUES], ['Ø', ' x '], []]) {
      const clean = cellCleaner(nulls);
      fc.assert(
        fc.property(cell, fc.nat(3), (text, offset) => {
          const bytes = Buffer.from(`${'q'.repeat(offset)}${text}q`, 'utf8');
          const end = offset + Buffer.byteLength(text);
          const ascii = [...text].every((c) => c.charCodeAt(0) < 0x80);
          const plain = ascii && text !== '' && text.trim() === text && !text.startsWith("'");
          expect(clean.keeps(bytes, offset, end)).toBe(plain && clean(text) === text);
        }),
        { numRuns: 1500 },
      );
    }
  });
});

describe('RowMapper.verbatim', () => {
  const keysOf = async (extra: Record<string, unknown>, header = 'item_id,store_id,current_price,currency') => {
    const file = writeTemp(dir, `${header}\nITEM-1,S1,1.99,EUR\n`);
    const compiled = compileSource(source('product_store', extra));
    const reader = await readRows(file, { ...compiled, entity: 'product_store' }, { keysOnly: BUSINESS_KEY_FIELDS.product_store });
    try {
      return reader.conversion();
    } finally {
      reader.close();
    }
  };

  it('gives the key columns of a mapping that takes each key field from one column as it is, and converts to those cells', async () => {
    const conversion = await keysOf({ columns: { item_id: 'Artikel', store_id: 'Filiale', current_price: 'Preis' }, defaults: { store_id: 'S0' } }, 'Preis,Filiale,Artikel');
    expect(conversion?.verbatim?.columns).toEqual(new Map([['item_id', 2], ['store_id', 1]]));
    expect(conversion?.convert(['1.99', 'S1', 'ITEM-1'], 2)).toEqual({ kind: 'ok', record: { item_id: 'ITEM-1', store_id: 'S1' } });
  });

  it('gives none where a key field is mapped, filled down, built from a template or from the first of several columns, or rows are skipped', async () => {
    const header = 'item_id,store_id,alt_store,current_price';
    const cases = [
      { maps: { store_id: { S1: 'STORE-1' } } },
      { fill_down: ['store_id'] },
      { columns: { store_id: '{store_id}-{alt_store}' } },
      { columns: { store_id: ['store_id', 'alt_store'] } },
      { skip_rows: { when_empty: ['alt_store'] } },
    ];
    for (const extra of cases) expect((await keysOf(extra, header))?.verbatim, JSON.stringify(extra)).toBeNull();
    expect((await keysOf({}, header))?.verbatim).not.toBeNull();
  });
});
