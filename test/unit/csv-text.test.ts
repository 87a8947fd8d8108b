import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { csvField, csvLine } from '../../src/csv-text.ts';

describe('the one CSV quoting rule (src/csv-text.ts)', () => {
  it.each([
    ['plain', ',', 'plain'],
    ['a,b', ',', '"a,b"'],
    ['a;b', ';', '"a;b"'],
    ['a,b', ';', 'a,b'],
    ['12" Pizza', ',', '"12"" Pizza"'],
    ['two\nlines', ',', '"two\nlines"'],
    [' padded', ',', '" padded"'],
    ['tab\t', ',', '"tab\t"'],
    ['', ',', ''],
  ])('%j with %j -> %j', (value, delimiter, expected) => {
    expect(csvField(value, delimiter)).toBe(expected);
  });

  it('reads back as written, for any fields and delimiter', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { minLength: 2, maxLength: 5 }), fc.constantFrom(',', ';', '\t', '|'), (fields, delimiter) => {
        const records: string[][] = parse(csvLine(fields, delimiter), { delimiter, relax_column_count: true });
        expect(records).toHaveLength(1);
        const [record] = records;
        expect(record).toEqual(fields);
      }),
    );
  });
});
