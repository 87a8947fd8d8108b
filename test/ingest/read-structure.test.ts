import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRows } from '../../src/ingest/read/index.ts';
import type { RowOutcome } from '../../src/ingest/read/index.ts';
import { FIXTURES, drain, failure, source, tempDir, writeTemp } from './support/read-helpers.ts';

const dir = tempDir();
const ps = source('product_store');
const HEADER = 'item_id,store_id,current_price\n';

describe('unclosed quotes', () => {
  it('fail the file at the line the quote opens, after yielding the rows before it, and swallow nothing', async () => {
    const reader = await readRows(join(FIXTURES, 'unclosed-quote.csv'), ps);
    const seen: RowOutcome<unknown>[] = [];
    const error = await (async () => {
      try {
        for await (const outcome of reader) seen.push(outcome);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(seen.map((o) => [o.kind, o.line])).toEqual([['row', 2]]);
    expect(error).toMatchObject({ code: 'UNCLOSED_QUOTE', line: 3 });
    expect(reader.summary().complete).toBe(false);
  });

  it('fail the file when a later stray quote closes it and lines were merged into one record', async () => {
    const file = writeTemp(dir, `${HEADER}A1,S1,1\nA2,"S2,2\nA3,S3,3\nA4,"S4",4\nA5,S5,5\n`);
    expect(await failure(file, ps)).toMatchObject({ code: 'UNCLOSED_QUOTE', line: 3 });
  });

  it('fail the file when ditto marks merge rows into one of the header\'s width (read without the quotes, each line is a row)', async () => {
    const ditto = writeTemp(dir, `${HEADER}A1,S1,1\nA2,",2\nA3,",3\nA4,S4,4\n`);
    const dittoFailure = await failure(ditto, ps);
    expect(dittoFailure).toMatchObject({ code: 'UNCLOSED_QUOTE', line: 3 });
    expect((dittoFailure as Error).message).toContain('ditto mark');
    // A real two-line value whose commas happen to fit the widths (an address) is a value, not a ditto mark.
    const address = writeTemp(dir, `${HEADER}A1,"Hauptstr. 1, Berlin\r\nHaus B, 2. OG",1\nA2,S2,2\n`);
    expect((await drain(address, ps)).rows.map((r) => r.record['store_id'])).toEqual(['Hauptstr. 1, Berlin\r\nHaus B, 2. OG', 'S2']);
    // A stray quote at the start of a cell, closed two lines down by an inch mark: three rows read as one.
    const stray = writeTemp(dir, `${HEADER}A1,S1,1\nA2,"S2 Nord,2\nA3,S3,3\nA4,Halle 12",4\nA5,S5,5\n`);
    expect(await failure(stray, ps)).toMatchObject({ code: 'UNCLOSED_QUOTE', line: 3 });
  });

  it('stop at 4 MiB when a quote swallows a big file (memory stays bounded)', async () => {
    const file = writeTemp(dir, `${HEADER}A1,"S1,1\n${'A,S,1\n'.repeat(800_000)}`);
    expect(await failure(file, ps)).toMatchObject({ code: 'RECORD_TOO_LARGE', line: 2 });
  });

  it('quoted fields with line breaks, escaped quotes and delimiters are fine', async () => {
    const file = writeTemp(dir, `item_id,store_id,current_price,store_name\nA1,S1,1,"x ""y"", z\r\nnext"\nA2,S2,2,ok\n`);
    const { rows, summary } = await drain(file, ps);
    expect(rows.map((r) => [r.line, r.record['store_name']])).toEqual([
      [2, 'x "y", z\r\nnext'],
      [4, 'ok'],
    ]);
    expect(summary.lines).toBe(4);
  });

  it('an unclosed quote in the header fails on line 1', async () => {
    const file = writeTemp(dir, '"item_id,store_id,current_price\nA,S,1\n');
    expect(await failure(file, source('product_store', { delimiter: ',' }))).toMatchObject({ code: 'UNCLOSED_QUOTE', line: 1 });
    const detecting = await failure(file, ps);
    expect(detecting).toMatchObject({ code: 'DELIMITER_NOT_DETECTED', line: 1 });
    expect((detecting as Error).message).toContain('quote not closed');
  });

  it('text after a closing quote on the same line is kept literally', async () => {
    const file = writeTemp(dir, `item_id,store_id,current_price,store_name\nA1,S1,1,"ab"cd\n`);
    const { rows } = await drain(file, ps);
    expect(rows[0]?.record['store_name']).toBe('"ab"cd');
  });

  it('a quote inside an unquoted field is kept as a character', async () => {
    const file = writeTemp(dir, `item_id,store_id,current_price,store_name\nA1,S1,1,12" Pizza\n`);
    const { rows } = await drain(file, ps);
    expect(rows[0]?.record['store_name']).toBe('12" Pizza');
  });
});

describe('field counts', () => {
  it('rows with more or fewer fields than the header are rejects with their line, never truncated', async () => {
    const file = writeTemp(dir, `${HEADER}A1,S1,1\nA2,S2\nA3,S3,3,extra\nA4,S4,4\n`);
    const { rows, rejects, summary } = await drain(file, ps);
    expect(rows.map((r) => r.line)).toEqual([2, 5]);
    expect(rejects).toEqual([
      expect.objectContaining({ line: 3, field: null, code: 'field_count', rawFields: ['A2', 'S2'] }),
      expect.objectContaining({ line: 4, field: null, code: 'field_count', rawFields: ['A3', 'S3', '3', 'extra'] }),
    ]);
    expect(summary).toMatchObject({ rows: 4, accepted: 2, rejected: 2, complete: true });
  });
});

describe('lines', () => {
  it('mixed line endings split every record; blank lines are skipped and counted', async () => {
    const file = writeTemp(dir, `item_id,store_id,current_price\r\nA1,S1,1\nA2,S2,2\rA3,S3,3\r\n\n  \n,,\nA4,S4,4`);
    const { rows, summary } = await drain(file, ps);
    expect(rows.map((r) => [r.line, r.record['item_id']])).toEqual([
      [2, 'A1'],
      [3, 'A2'],
      [4, 'A3'],
      [8, 'A4'],
    ]);
    expect(summary).toMatchObject({ rows: 4, accepted: 4, blankLines: 3, lines: 8 });
  });
});

describe('delimiter detection', () => {
  it.each([
    [',', 'item_id,store_id,current_price\nA,S,1\n'],
    [';', 'item_id;store_id;current_price\nA;S;1,5\n'],
    ['\t', 'item_id\tstore_id\tcurrent_price\nA\tS\t1\n'],
    ['|', 'item_id|store_id|current_price\nA|S|1\n'],
    [';', '"item_id";"store, id";store_id;current_price\nA;x;S;1\n'],
  ])('detects %j', async (delimiter, text) => {
    const { summary } = await drain(writeTemp(dir, text), ps);
    expect(summary.delimiter).toBe(delimiter);
  });

  it('refuses a tie or no candidate, and takes a configured delimiter as is', async () => {
    expect(await failure(writeTemp(dir, 'item_id,store_id;current_price\nA,S;1\n'), ps)).toMatchObject({
      code: 'DELIMITER_NOT_DETECTED',
    });
    expect(await failure(writeTemp(dir, 'item_id\nA\n'), ps)).toMatchObject({ code: 'DELIMITER_NOT_DETECTED' });
    const { summary } = await drain(writeTemp(dir, 'item_id;store_id;current_price\nA;S;1\n'), source('product_store', { delimiter: ';' }));
    expect(summary.delimiter).toBe(';');
  });
});

describe('headers', () => {
  it.each([
    ['an empty file', '', 'EMPTY_FILE'],
    ['a BOM only', '\uFEFF', 'EMPTY_FILE'],
    ['blank lines only', '\n \r\n\n', 'EMPTY_FILE'],
    // A header under an empty line 1 is found (issue 28, point 2: read-layouts.test.ts); content naming no column is not.
    ['an empty line 1, no line naming a column', '\nArtikel,Filiale,Preis\nA,S,1\n', 'NO_HEADER'],
    ['delimiters only on line 1', ',,\nA,S,1\n', 'NO_HEADER'],
    ['a duplicate name', 'item_id,store_id, item_id ,current_price\n', 'DUPLICATE_HEADER'],
    ['none of the fields', 'Artikel,Filiale,Preis\nA,S,1\n', 'NO_KNOWN_COLUMNS'],
    ['a required field missing', 'item_id,current_price\nA,1\n', 'MISSING_COLUMNS'],
  ])('%s fails the file', async (_name, text, code) => {
    expect(await failure(writeTemp(dir, text), ps)).toMatchObject({ code });
  });

  it('names the mapping in NO_KNOWN_COLUMNS, and hints at the delimiter', async () => {
    const error = await failure(
      writeTemp(dir, 'Artikel;Filiale;Preis\nA;S;1\n'),
      source('product_store', { delimiter: ',', columns: { item_id: 'Artikelnummer' } }),
    );
    expect((error as Error).message).toContain('item_id <- "Artikelnummer"');
    expect((error as Error).message).toContain('delimiter');
  });

  it('trims header names; a default stands in for a missing required column', async () => {
    const file = writeTemp(dir, ' item_id ,  current_price\nA,1\n');
    const { rows } = await drain(file, source('product_store', { defaults: { store_id: 'S1' } }));
    expect(rows[0]?.record).toEqual({ item_id: 'A', current_price: '1', store_id: 'S1' });
  });

  it('warns about a mapped optional column absent from the header, and about unnamed columns', async () => {
    const file = writeTemp(dir, 'item_id,store_id,current_price,\nA,S,1,\n');
    const { summary } = await drain(file, source('product_store', { columns: { unit_cost: 'EK' } }));
    expect(summary.ignoredColumns).toEqual(['(column 4)']);
    expect(summary.warnings).toEqual([expect.stringContaining('"EK"'), expect.stringContaining('(column 4)')]);
  });
});

describe('I/O errors', () => {
  it('are not file format errors', async () => {
    await expect(readRows(join(dir, 'missing.csv'), ps)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
