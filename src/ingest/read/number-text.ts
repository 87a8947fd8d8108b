/**
 * Numbers as people write them, the one home of the rules for every reader (CSV, the fast lane, workbooks' text
 * cells) and for decimal and integer fields alike: the text of a cell in, the number as the API writes it (a point
 * for decimals, a leading minus) or the reason it is refused.
 *
 * - A currency around the number is dropped: a symbol (`€`, `$`, `£`, `kr`, `zł`, ...) or an ISO 4217 code (`EUR`),
 *   before or after it, with or without a space: `"0,90 €"`, `EUR 12.90`, `1 299,00 kr`. Only one. Three capitals
 *   that are no currency (`1,99 STK`) and `¢` (cents: `99¢` is not 99) leave the text no number. Which currency a
 *   cell names (`currencyIn`) is checked against the row's by the row mapper (map-row.ts).
 * - A trailing minus is a sign (`12.90-`, as ledgers and tills write credits).
 * - Digits grouped with a space, a no-break space, a narrow no-break space or a thin space are thousands: such a
 *   space cannot be a decimal separator, so no setting is needed; the groups must be well formed (`1 299,00`, never
 *   `12 99`).
 * - `thousands_separator` (`.`, `,`, `'`) is removed only when the groups are well formed (1.234.567,89; not 1.23,4).
 * - What stays ambiguous is refused with a reason that says so, never guessed: `1.50` in a column whose decimal
 *   separator is `,` is no thousands grouping (a group has three digits), so the fix is the column's `number_format`,
 *   not `thousands_separator`; the hint to set `thousands_separator` is given only where it is the fix.
 * Digits are never touched: no float is involved.
 */

export interface NumberFormat {
  readonly decimalSeparator: '.' | ',';
  readonly thousandsSeparator: string | undefined;
}

/** The number as the API writes it (`-1234.5`), or why the text is not one. */
export type NumberText = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly message: string };

/** Spaces that only ever group digits. */
const SPACES = ' \u00A0\u202F\u2009';
const SPACE = new RegExp(`[${SPACES}]`);
const SPACE_GROUPS = new RegExp(`^\\d{1,3}(?:[${SPACES}]\\d{3})+`);
const ONLY_DIGITS_AND_MARKS = new RegExp(`^[\\d.,${SPACES}]+$`);

/** Currency symbols and ISO codes (three capitals) written around a number. */
const CURRENCY = '([A-Z]{3}|[€$£¥₹₽₩₺₴]|R\\$|kr\\.?|Kč|zł|Ft|lei|Fr\\.|SFr\\.)';
const CURRENCY_BEFORE = new RegExp(`^([+-]?)[${SPACES}]*${CURRENCY}[${SPACES}]*(?=[+\\-\\d])`);
const CURRENCY_AFTER = new RegExp(`(?<=\\d)[${SPACES}]*${CURRENCY}$`);
/** The ISO 4217 codes (Node's ICU): `STK` or `PCS` after a number is a unit, not a currency. */
const ISO_CODES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));
/** The symbols that name one currency; `$`, `¥` and `kr` name several and are not checked. */
const SYMBOL_CODES: Readonly<Record<string, string>> = {
  '€': 'EUR', '£': 'GBP', '₹': 'INR', '₽': 'RUB', '₩': 'KRW', '₺': 'TRY', '₴': 'UAH', 'R$': 'BRL',
  'Kč': 'CZK', 'zł': 'PLN', 'Ft': 'HUF', 'lei': 'RON', 'Fr.': 'CHF', 'SFr.': 'CHF',
};
const isCurrency = (mark: string) => !/^[A-Z]{3}$/.test(mark) || ISO_CODES.has(mark);

/** The currency written around a number (`12,90 USD`, `€12.90`): its ISO code, or undefined when none or ambiguous. */
export function currencyIn(cell: string): string | undefined {
  const mark = CURRENCY_BEFORE.exec(cell)?.[2] ?? CURRENCY_AFTER.exec(cell)?.[1];
  return mark === undefined || !isCurrency(mark) ? undefined : currencyCodeOf(mark);
}

/** A currency as written (`EUR`, `eur`, `€`, `Fr.`) as its ISO code; undefined for one that names several (`$`, `kr`). */
export function currencyCodeOf(text: string): string | undefined {
  const trimmed = text.trim();
  return /^[A-Za-z]{3}$/.test(trimmed) ? trimmed.toUpperCase() : SYMBOL_CODES[trimmed];
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The value as it may appear in a message: bounded, quoted. */
export function shown(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
}

/** `cell` without a currency around it and with its sign in front: the digits and separators, or null when none. */
function bare(cell: string): string {
  let value = cell;
  const before = CURRENCY_BEFORE.exec(value);
  if (before !== null) {
    if (isCurrency(before[2] ?? '')) value = (before[1] ?? '') + value.slice(before[0].length);
  } else {
    const after = CURRENCY_AFTER.exec(value);
    if (after !== null && isCurrency(after[1] ?? '')) value = value.slice(0, after.index);
  }
  // A trailing minus (`12.90-`): a sign, when there is none in front.
  if (value.length > 1 && value.endsWith('-') && /^\d/.test(value)) value = `-${value.slice(0, -1)}`;
  return value;
}

/**
 * Reads a number. `integer`: whole numbers only, an integral decimal (`12,000` with a comma separator: Odoo writes
 * quantities so) included.
 */
export function readNumber(cell: string, format: NumberFormat, integer = false): NumberText {
  const decimal = format.decimalSeparator;
  const foreign = decimal === ',' ? '.' : ',';
  const value = bare(cell);
  const sign = value.startsWith('-') || value.startsWith('+') ? value[0] : '';
  let body = sign === '' ? value : value.slice(1);
  const fraction = `(?:${escapeRegex(decimal)}\\d*)?$`;

  // Spaces between digits group thousands; text with anything else in it ("19 %") is not a number at all.
  if (SPACE.test(body) && ONLY_DIGITS_AND_MARKS.test(body)) {
    const groups = SPACE_GROUPS.exec(body);
    if (groups === null || !new RegExp(fraction).test(body.slice(groups[0].length))) {
      return { ok: false, message: `${shown(cell)} has digits grouped badly (thousands are groups of three)` };
    }
    body = groups[0].replace(new RegExp(`[${SPACES}]`, 'g'), '') + body.slice(groups[0].length);
  }

  const thousands = format.thousandsSeparator;
  if (thousands !== undefined && thousands !== ' ' && body.includes(thousands)) {
    const grouped = new RegExp(`^\\d{1,3}(?:${escapeRegex(thousands)}\\d{3})+${fraction}`);
    if (!grouped.test(body)) {
      if (thousands === foreign && !body.includes(decimal)) {
        return { ok: false, message: `${shown(cell)} is ambiguous: "${thousands}" groups thousands in this column, but not in groups of three; if the column writes decimals with "${thousands}", give it its own number_format (decimal_separator: "${thousands}")` };
      }
      return { ok: false, message: `${shown(cell)} has badly grouped thousands separators` };
    }
    body = body.split(thousands).join('');
  }

  if (body.includes(foreign)) {
    const wellGrouped = new RegExp(`^\\d{1,3}(?:${escapeRegex(foreign)}\\d{3})+${fraction}`).test(body);
    if (wellGrouped && body.includes(decimal)) {
      return { ok: false, message: `${shown(cell)} is not a number: the decimal separator is "${decimal}"; set thousands_separator: "${foreign}" (it groups thousands)` };
    }
    if (wellGrouped) {
      return { ok: false, message: `${shown(cell)} is ambiguous: the decimal separator is "${decimal}", and "${foreign}" may group thousands (then set thousands_separator: "${foreign}") or be this column's decimal separator (then give it its own number_format)` };
    }
    return { ok: false, message: `${shown(cell)} is ambiguous: the decimal separator of this column is "${decimal}", and "${foreign}" here groups no thousands; if the column writes decimals with "${foreign}", give it its own number_format (decimal_separator: "${foreign}")` };
  }

  const match = new RegExp(`^(\\d*)(?:${escapeRegex(decimal)}(\\d*))?$`).exec(body);
  const [, whole = '', digits] = match ?? [];
  if (match === null || whole + (digits ?? '') === '' || (integer && whole === '')) {
    return { ok: false, message: `${shown(cell)} is not a ${integer ? 'whole number' : 'decimal'}` };
  }
  if (integer) {
    if (digits !== undefined && /[1-9]/.test(digits)) return { ok: false, message: `${shown(cell)} is not a whole number` };
    return { ok: true, text: `${sign}${whole}` };
  }
  return { ok: true, text: `${sign}${whole}${digits === undefined ? '' : `.${digits}`}` };
}
