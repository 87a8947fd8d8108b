/**
 * Cell converters: a trimmed, non-empty source cell in, the API value out, or a CellError with the API's code
 * (decimal_parsing, int_parsing, bool_parsing, date_parsing, datetime_parsing) so that a row refused here reads
 * like a row refused by the API. Converters return errors instead of throwing: they run once per cell.
 *
 * Decimals stay strings: separators are rewritten, digits are never touched, no float is involved.
 * Separator rules, so that a misconfigured file is rejected rather than misread:
 * - with `decimal_separator: ','` a '.' in a value is an error unless `thousands_separator: '.'` (1.234 is not
 *   silently 1.234 when the ERP meant 1234); with '.', a ',' is an error unless it is the thousands separator;
 * - a thousands separator is removed only when the groups are well formed (1.234.567,89; not 1.23,4).
 */
import { DECIMAL_PATTERN } from '../../api/schemas/index.ts';

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

/** The value as it may appear in a message: bounded, quoted. */
export function shown(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export interface NumberFormat {
  readonly decimalSeparator: '.' | ',';
  readonly thousandsSeparator: string | undefined;
}

/**
 * Removes well-formed thousands separators; null when they are present but badly grouped. `decimal` is the
 * separator allowed after the groups (null for integers): 1.234.5 is refused, not read as 12345.
 */
function groupingRemover(thousands: string | undefined, decimal: string | null): (value: string) => string | null {
  if (thousands === undefined) return (value) => value;
  // A space separator also matches the no-break spaces spreadsheets put there.
  const chars = thousands === ' ' ? [' ', '\u00A0', '\u202F'] : [thousands];
  const any = new RegExp(`[${chars.map(escapeRegex).join('')}]`, 'g');
  const fraction = decimal === null ? '' : `(?:${escapeRegex(decimal)}\\d*)?`;
  const grouped = new RegExp(`^[+-]?\\d{1,3}(?:[${chars.map(escapeRegex).join('')}]\\d{3})+${fraction}$`);
  return (value) => {
    any.lastIndex = 0;
    if (!any.test(value)) return value;
    if (!grouped.test(value)) return null;
    any.lastIndex = 0;
    return value.replace(any, '');
  };
}

export function decimalConverter(format: NumberFormat): Converter {
  const ungroup = groupingRemover(format.thousandsSeparator, format.decimalSeparator);
  const comma = format.decimalSeparator === ',';
  const foreign = comma ? '.' : ',';
  return (cell) => {
    const value = ungroup(cell);
    if (value === null) {
      return new CellError('decimal_parsing', `${shown(cell)} has badly grouped thousands separators`);
    }
    if (value.includes(foreign)) {
      const hint = `the decimal separator is "${format.decimalSeparator}"; set thousands_separator if "${foreign}" groups thousands`;
      return new CellError('decimal_parsing', `${shown(cell)} is not a decimal: ${hint}`);
    }
    const decimal = comma ? value.replace(',', '.') : value;
    if (!DECIMAL_PATTERN.test(decimal)) return new CellError('decimal_parsing', `${shown(cell)} is not a decimal`);
    return decimal;
  };
}

/**
 * Whole numbers (stock on hand). An integral decimal is a whole number: `0.0` and `12.000` are 0 and 12 (Odoo writes
 * every quantity so), with the source's decimal separator; `12.5` is a reject, never rounded.
 */
export function integerConverter(format: NumberFormat): Converter {
  const ungroup = groupingRemover(format.thousandsSeparator, format.decimalSeparator);
  const whole = new RegExp(`^([+-]?\\d+)(?:${escapeRegex(format.decimalSeparator)}0*)?$`);
  return (cell) => {
    const value = ungroup(cell);
    const digits = value === null ? null : whole.exec(value)?.[1];
    if (digits === undefined || digits === null) {
      return new CellError('int_parsing', `${shown(cell)} is not a whole number`);
    }
    const number = Number(digits);
    if (!Number.isSafeInteger(number)) return new CellError('int_parsing', `${shown(cell)} is too large`);
    return number;
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
