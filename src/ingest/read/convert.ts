/**
 * Cell converters: a trimmed, non-empty source cell in, the API value out, or a CellError with the API's code
 * (decimal_parsing, int_parsing, bool_parsing, date_parsing, datetime_parsing) so that a row refused here reads
 * like a row refused by the API. Converters return errors instead of throwing: they run once per cell.
 *
 * Decimals stay strings: separators are rewritten, digits are never touched, no float is involved. How numbers are
 * written (currencies, signs, separators, what is ambiguous and refused) is number-text.ts, for decimals and whole
 * numbers alike; a field's format is its `number_format` or the source's (compile-source.ts).
 */
import { DECIMAL_PATTERN } from '../../api/schemas/index.ts';
import { readNumber, shown, type NumberFormat } from './number-text.ts';

export class CellError {
  readonly code: string;
  readonly message: string;

  constructor(code: string, message: string) {
    this.code = code;
    this.message = message;
  }
}

export type CellValue = string | number | boolean;
export type Converter = (cell: string) => CellValue | CellError;

export { currencyCodeOf, currencyIn, shown } from './number-text.ts';
export type { NumberFormat } from './number-text.ts';

/** The decimal converters: a currency written in their cells is checked against the row's (map-row.ts). */
const DECIMAL_CONVERTERS = new WeakSet<Converter>();
export const readsDecimal = (convert: Converter): boolean => DECIMAL_CONVERTERS.has(convert);

export function decimalConverter(format: NumberFormat): Converter {
  const convert: Converter = (cell) => {
    const number = readNumber(cell, format);
    if (!number.ok) return new CellError('decimal_parsing', number.message);
    if (!DECIMAL_PATTERN.test(number.text)) return new CellError('decimal_parsing', `${shown(cell)} is not a decimal`);
    return number.text;
  };
  DECIMAL_CONVERTERS.add(convert);
  return convert;
}

/**
 * Whole numbers (stock on hand). An integral decimal is a whole number: `0.0` and `12.000` are 0 and 12 (Odoo writes
 * every quantity so), with the source's decimal separator; `12.5` is a reject, never rounded.
 */
export function integerConverter(format: NumberFormat): Converter {
  return (cell) => {
    const number = readNumber(cell, format, true);
    if (!number.ok) return new CellError('int_parsing', number.message);
    const value = Number(number.text);
    if (!Number.isSafeInteger(value)) return new CellError('int_parsing', `${shown(cell)} is too large`);
    return value === 0 ? 0 : value;
  };
}

const BOOLEANS: Record<string, boolean> = {
  true: true,
  false: false,
  '1': true,
  '0': false,
  yes: true,
  no: false,
  ja: true,
  nein: false,
};

export const booleanConverter: Converter = (cell) => {
  const value = BOOLEANS[cell.toLowerCase()];
  if (value === undefined) {
    return new CellError('bool_parsing', `${shown(cell)} is not a boolean (true/false, 1/0, yes/no, ja/nein)`);
  }
  return value;
};

export const stringConverter: Converter = (cell) => cell;
