import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CellError, booleanConverter, decimalConverter, integerConverter } from '../../src/ingest/read/convert.ts';
import type { Converter } from '../../src/ingest/read/convert.ts';
import { dateConverter } from '../../src/ingest/read/dates.ts';

function result(convert: Converter, cell: string): unknown {
  const value = convert(cell);
  return value instanceof CellError ? value.code : value;
}

const point = decimalConverter({ decimalSeparator: '.', thousandsSeparator: undefined });
const comma = decimalConverter({ decimalSeparator: ',', thousandsSeparator: undefined });
const german = decimalConverter({ decimalSeparator: ',', thousandsSeparator: '.' });

describe('decimals', () => {
  const english = decimalConverter({ decimalSeparator: '.', thousandsSeparator: ',' });
  const swiss = decimalConverter({ decimalSeparator: '.', thousandsSeparator: "'" });
  const french = decimalConverter({ decimalSeparator: ',', thousandsSeparator: ' ' });

  it.each([
    [point, '1.50', '1.50'],
    [point, '-0.5', '-0.5'],
    [point, '007.10', '007.10'],
    [point, '1,5', 'decimal_parsing'],
    [point, '1e3', 'decimal_parsing'],
    [comma, '1,50', '1.50'],
    [comma, '1.234', 'decimal_parsing'], // never silently 1.234
    [comma, '1.234,5', 'decimal_parsing'],
    [comma, '1,2,3', 'decimal_parsing'],
    [german, '1.234,56', '1234.56'],
    [german, '1.234.567', '1234567'],
    [german, '1.23,4', 'decimal_parsing'],
    [german, '1.234.5', 'decimal_parsing'],
    [german, '12,5', '12.5'],
    [english, '1,234.56', '1234.56'],
    [english, '1,5', 'decimal_parsing'],
    [swiss, "1'234.50", '1234.50'],
    [french, '1 234,5', '1234.5'],
    [french, '1\u00A0234,5', '1234.5'],
    // Issue 28 point 3: a currency around a number is dropped (this row was a reject before).
    [point, '12.5 €', '12.5'],
  ])('%#: %j', (convert, cell, expected) => {
    expect(result(convert, cell)).toBe(expected);
  });

  it('keeps every digit of a long decimal (no float involved)', () => {
    expect(point('12345678901234567890.123456789')).toBe('12345678901234567890.123456789');
  });
});

describe('numbers as people write them (issue 28, point 3)', () => {
  const quantity = integerConverter({ decimalSeparator: ',', thousandsSeparator: undefined });

  it.each([
    [comma, '0,90 €', '0.90'],
    [comma, '0,90€', '0.90'],
    [point, 'EUR 12.90', '12.90'],
    [point, '$12.90', '12.90'],
    [point, '-€12.90', '-12.90'],
    [point, '£ 3.50', '3.50'],
    [comma, '1 299,00 kr', '1299.00'],
    [comma, '1\u00A0299,00', '1299.00'],
    [comma, '1\u202F299,00', '1299.00'],
    [comma, '1\u2009299,00', '1299.00'],
    [comma, '12 345 678,5', '12345678.5'],
    [point, '12.90-', '-12.90'],
    [comma, '12,90- €', 'decimal_parsing'],
    [comma, '12,90-', '-12.90'],
    [german, '1.299,00 EUR', '1299.00'],
    [comma, '12 99,00', 'decimal_parsing'],
    [point, 'EUR', 'decimal_parsing'],
    [point, 'EUR 12.90 €', 'decimal_parsing'],
    [point, '12.90 Stk', 'decimal_parsing'],
    // Three capitals that are no ISO 4217 code are a unit, and cents are not units of the price.
    [comma, '1,99 STK', 'decimal_parsing'],
    [point, 'PCS 3.50', 'decimal_parsing'],
    [point, '99¢', 'decimal_parsing'],
    [comma, '12,90 USD', '12.90'],
    [quantity, '3-', -3],
    [quantity, '1 200', 1200],
  ])('%#: %j', (convert, cell, expected) => {
    expect(result(convert, cell)).toBe(expected);
  });

  /** The reason a cell is refused. */
  const reason = (convert: Converter, cell: string): string => {
    const value = convert(cell);
    if (!(value instanceof CellError)) throw new Error(`${cell} was accepted as ${String(value)}`);
    return value.message;
  };

  it('refuses 1.50 in a comma-decimal column as ambiguous, without the thousands hint (a group has three digits)', () => {
    for (const convert of [comma, german]) {
      const message = reason(convert, '1.50');
      expect(message).toMatch(/ambiguous/);
      expect(message).toMatch(/number_format/);
      expect(message).not.toMatch(/set thousands_separator/);
    }
    expect(reason(point, '12,5')).toMatch(/ambiguous.*number_format/);
    expect(reason(point, '12,5')).not.toMatch(/set thousands_separator/);
  });

  it('gives the thousands hint where it is the fix, and both ways where either could be', () => {
    expect(reason(comma, '1.234,56')).toMatch(/set thousands_separator: "\."/);
    expect(reason(comma, '1.234,56')).not.toMatch(/ambiguous/);
    const either = reason(comma, '1.234');
    expect(either).toMatch(/ambiguous/);
    expect(either).toMatch(/thousands_separator/);
    expect(either).toMatch(/number_format/);
  });
});

describe('integers and booleans', () => {
  const int = integerConverter({ decimalSeparator: ',', thousandsSeparator: '.' });
  it.each([
    ['12', 12],
    ['-3', -3],
    ['1.234', 1234],
    ['1,5', 'int_parsing'],
    ['12.0', 'int_parsing'],
    ['99999999999999999999', 'int_parsing'],
  ])('%j', (cell, expected) => {
    expect(result(int, cell)).toBe(expected);
  });

  it.each([
    ['true', true],
    ['FALSE', false],
    ['1', true],
    ['0', false],
    ['Yes', true],
    ['no', false],
    ['ja', true],
    ['Nein', false],
    ['maybe', 'bool_parsing'],
  ])('%j', (cell, expected) => {
    expect(result(booleanConverter, cell)).toBe(expected);
  });
});

describe('dates', () => {
  const dateFields = dateConverter(['DD.MM.YYYY', 'YYYYMMDD', 'iso'], 'date');
  const datetimes = dateConverter(['DD.MM.YYYY HH:mm', 'D.M.YYYY', 'MM/DD/YYYY', 'iso'], 'datetime');

  it.each([
    ['01.03.2026', '2026-03-01'],
    ['20260301', '2026-03-01'],
    ['2026-03-01', '2026-03-01'],
    ['2026-03-01T00:00:00Z', '2026-03-01'],
    ['29.02.2024', '2024-02-29'],
    ['29.02.2026', 'date_parsing'],
    ['31.04.2026', 'date_parsing'],
    ['1.3.2026', 'date_parsing'],
    ['2026-03-01T10:00:00Z', 'date_parsing'], // a time of day is not dropped silently
    ['01.13.2026', 'date_parsing'],
  ])('date field %j', (cell, expected) => {
    expect(result(dateFields, cell)).toBe(expected);
  });

  it.each([
    ['01.03.2026 10:05', '2026-03-01T10:05:00Z'],
    ['1.3.2026', '2026-03-01T00:00:00Z'],
    ['03/01/2026', '2026-03-01T00:00:00Z'],
    ['2026-03-01T10:05:07.123Z', '2026-03-01T10:05:07.123Z'],
    ['2026-03-01 10:05', '2026-03-01T10:05:00Z'],
    ['2026-03-01T10:05:00+0100', '2026-03-01T10:05:00+01:00'],
    ['2026-03-01T10:05:00-05:30', '2026-03-01T10:05:00-05:30'],
    ['2026-03-01', '2026-03-01T00:00:00Z'],
    ['01.03.2026 24:00', 'datetime_parsing'],
    ['01.03.2026 10:60', 'datetime_parsing'],
    ['2026-03-01T10:05:00+25:00', 'datetime_parsing'],
    ['yesterday', 'datetime_parsing'],
  ])('datetime field %j', (cell, expected) => {
    expect(result(datetimes, cell)).toBe(expected);
  });

  describe('the fast path of iso for cells already in the API form', () => {
    const digits = (n: number, max: number) => fc.integer({ min: 0, max }).map((v) => String(v).padStart(n, '0'));
    // Near-canonical cells, out-of-range fields included (month 13, hour 24, offset +25:00, 30 February).
    const nearIso = fc
      .record({
        year: digits(4, 9999),
        month: digits(2, 19),
        day: digits(2, 39),
        hour: digits(2, 29),
        minute: digits(2, 69),
        second: digits(2, 69),
        fraction: fc.constantFrom('', '.5', '.123', '.123456789', '.1234567890'),
        offset: fc.oneof(fc.constant('Z'), fc.constant(''), fc.tuple(fc.constantFrom('+', '-'), digits(2, 29), digits(2, 69)).map(([s, h, m]) => `${s}${h}:${m}`)),
        timeOfDay: fc.boolean(),
      })
      .map((p) => (p.timeOfDay ? `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}${p.fraction}${p.offset}` : `${p.year}-${p.month}-${p.day}`));

    it.each(['date', 'datetime'] as const)('gives the result of the general path for every %s cell', (kind) => {
      const fast = dateConverter(['iso'], kind);
      // YYYYMMDD never matches a cell with dashes, and it keeps the fast path off: the general path of iso decides.
      const general = dateConverter(['YYYYMMDD', 'iso'], kind);
      fc.assert(
        fc.property(nearIso, (cell) => {
          expect(result(fast, cell)).toBe(result(general, cell));
        }),
        { numRuns: 5000 },
      );
    });
  });
});
