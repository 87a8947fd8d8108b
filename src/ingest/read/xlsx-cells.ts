/**
 * A spreadsheet cell as the text a CSV export of it would hold, so that everything after reading (mapping,
 * conversion, validation, rejects) is the same as for CSV:
 *
 * - numbers: the value at Excel's own precision (15 significant digits, as its formula bar shows it), as a plain
 *   decimal: 1.1 stays "1.1" (never "1.1000000000000001"), a formula's 0.30000000000000004 is "0.3", 1e-7 is
 *   "0.0000001". The display format does not round: a cell holding 2.675 shown as 2.68 is "2.675", what it holds.
 *   With the source's decimal separator, so that a number cell and a number typed as text read alike: "1,1" for a
 *   source with `decimal_separator: ","` (never a thousands separator).
 * - dates (cells with a date format): ISO 8601, "2026-11-24" at midnight, else "2026-11-24T18:30:00" (Excel stores
 *   a wall-clock time without a zone: it is read as UTC, or in the source's `timezone:`, as a CSV's would be).
 *   A date typed as text stays text and goes through `date_format` like any CSV cell.
 * - a whole number whose format only pads it with zeros (`0000`, `000000`: store numbers, EANs, article numbers kept
 *   as numbers) as it shows and as a CSV export writes it: 204 shown as "0204" is "0204".
 * - booleans "true"/"false"; rich text its plain text; a hyperlink its text; a formula its cached result, read as
 *   the cell's format says (a date format: a date; exceljs reads every formula result as a plain number).
 * - an error (#N/A, #DIV/0!, ...), or a formula without a saved result (the streaming reader does not keep a
 *   formula's error result, and a file saved without calculating has none): the cell's text is the error (or
 *   empty), and the problem is reported, so a row that uses the cell is rejected (`cell_error`) rather than sent
 *   with a guess. `null_values` do not apply to it: they are for text a person or an export wrote to mean "empty",
 *   and an error cell is a formula that failed (a lookup that found nothing), which only the workbook can show.
 */
import type { CellValue } from 'exceljs';
import excelUtils from 'exceljs/lib/utils/utils.js';

export interface CellText {
  readonly text: string;
  /** Why the cell has no usable value, as the end of "cell F7 ..."; the row is rejected if it uses the cell. */
  readonly problem?: string;
}

/** Excel keeps 15 significant digits; beyond them a double's digits are binary noise. */
const EXCEL_DIGITS = 15;

/** `n` at Excel's precision, as a plain decimal string (no exponent). */
export function excelNumberText(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  return plainDecimal(String(Number(n.toPrecision(EXCEL_DIGITS))));
}

/** "1.25e-7" -> "0.000000125", "1.2e+21" -> "1200000000000000000000"; other text as it is. */
function plainDecimal(text: string): string {
  const match = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/i.exec(text);
  if (match === null) return text;
  const [, sign = '', whole = '', fraction = '', exponentText = '0'] = match;
  const digits = whole + fraction;
  const point = whole.length + Number(exponentText);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`.replace(/0+$/, '');
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** A date cell (exceljs gives the wall-clock time as a UTC instant) as ISO 8601 without a zone. */
export function excelDateText(date: Date): string {
  const day = `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
  const h = date.getUTCHours();
  const m = date.getUTCMinutes();
  const s = date.getUTCSeconds();
  const ms = date.getUTCMilliseconds();
  if (h === 0 && m === 0 && s === 0 && ms === 0) return day;
  return `${day}T${pad(h)}:${pad(m)}:${pad(s)}${ms === 0 ? '' : `.${pad(ms, 3)}`}`;
}

/** `excelNumberText` with the source's decimal separator. */
function numberText(n: number, decimalSeparator: '.' | ','): string {
  const text = excelNumberText(n);
  return decimalSeparator === '.' ? text : text.replace('.', decimalSeparator);
}

/** How a cell is shown: its number format (`0000`, `dd.mm.yyyy`), and whether the workbook counts dates from 1904. */
export interface CellFormat {
  readonly numFmt?: string | undefined;
  readonly date1904?: boolean | undefined;
}

/** A format of zeros only pads a whole number to its width, as Excel shows it and writes it to CSV. */
const ZERO_PADDED = /^0+$/;

export function cellText(value: CellValue, decimalSeparator: '.' | ',' = '.', format: CellFormat = {}): CellText {
  if (value === null || value === undefined) return { text: '' };
  if (typeof value === 'number') {
    const { numFmt } = format;
    if (numFmt !== undefined && Number.isSafeInteger(value) && ZERO_PADDED.test(numFmt)) {
      return { text: `${value < 0 ? '-' : ''}${String(Math.abs(value)).padStart(numFmt.length, '0')}` };
    }
    return { text: numberText(value, decimalSeparator) };
  }
  if (typeof value === 'string') return { text: value };
  if (typeof value === 'boolean') return { text: value ? 'true' : 'false' };
  if (value instanceof Date) {
    return Number.isNaN(value.getTime()) ? { text: '', problem: 'the date cannot be read' } : { text: excelDateText(value) };
  }
  if ('error' in value) return { text: value.error, problem: `holds the error ${value.error}` };
  if ('richText' in value) return { text: value.richText.map((part) => part.text).join('') };
  if ('formula' in value || 'sharedFormula' in value) {
    const formula = 'sharedFormula' in value ? value.sharedFormula : value.formula;
    const result = value.result;
    if (result === undefined || result === null) {
      return { text: '', problem: `has the formula =${formula} without a result saved in the file (an error such as #N/A, or it was never calculated)` };
    }
    const isDate = typeof result === 'number' && Number.isFinite(result) && excelUtils.isDateFmt(format.numFmt);
    const inner = cellText(isDate ? excelUtils.excelToDate(result, format.date1904) : result, decimalSeparator, format);
    return inner.problem === undefined ? inner : { text: inner.text, problem: `has the formula =${formula}, which gives ${inner.text}` };
  }
  return { text: value.text }; // a hyperlink: what the cell shows
}
