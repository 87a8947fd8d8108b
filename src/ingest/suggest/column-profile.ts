/**
 * What a column's cells are, from a sample of them, for `sources suggest`: numbers (and how they are written:
 * decimal mark, digit grouping, a currency around them, a trailing minus), dates (the `date_format` that reads every
 * one, and whether times carry an offset), or text; the cells that stand for "empty" (`#N/A`, `NONE`, `-`); how many
 * distinct values (a key needs them all different). It decides nothing about fields: draft-source.ts does.
 *
 * A rule here only describes the sample. Anything the sample cannot settle (`1.234` could be a thousand or one and a
 * bit) is reported as ambiguous, never guessed, and the draft says so in a comment.
 */

export type ColumnKind = 'empty' | 'number' | 'date' | 'datetime' | 'text';

export interface NumberStyle {
  /** The decimal mark, or null when no cell had decimals (whole numbers). */
  readonly decimal: '.' | ',' | null;
  /** The digit-grouping character seen, or null. */
  readonly thousands: '.' | ',' | ' ' | "'" | null;
  /** A currency symbol or code written around the numbers, e.g. "€" or "EUR". */
  readonly currency: string | null;
  /** Some numbers are written with a trailing minus (`12.90-`). */
  readonly trailingMinus: boolean;
  /** True when some cells read either way (`1.234` with no other evidence). */
  readonly ambiguous: boolean;
}

export interface ColumnProfile {
  /** 0-based position. */
  readonly index: number;
  /** The header cell, or `column_N` (its 1-based position) when the header cell is empty. */
  readonly name: string;
  readonly kind: ColumnKind;
  readonly number: NumberStyle | null;
  /** `date_format` entries that read every date cell (`iso` for ISO 8601). */
  readonly dateFormat: string | null;
  /** Times without an offset: the wall clock of some time zone the file does not name. */
  readonly needsTimezone: boolean;
  /** No date of the sample tells day from month (none has a part over 12). */
  readonly dayMonthUnsure: boolean;
  /** Cells that stand for "empty", as written. */
  readonly nullMarkers: readonly string[];
  readonly filled: number;
  /** Cells the column's number format does not read (another decimal mark, words): rejects of a push. */
  readonly outliers: number;
  readonly distinct: number;
  readonly examples: readonly string[];
}

const NULL_MARKERS = /^(#N\/A|N\/A|#NV|NA|NULL|NONE|NIL|-|—|–|n\.a\.|k\.A\.)$/i;
const CURRENCY = /^(?:€|\$|£|¥|EUR|USD|GBP|CHF|SEK|NOK|DKK|PLN|CZK|HUF|HRK|kr|zł|Kč|kn|Ft)$/i;
/** A number with anything around it: sign, currency before or after, a trailing minus. */
const NUMBER_CELL = /^(?<pre>[^\d\s-]{1,3})?\s*(?<minus>-)?\s*(?<digits>\d[\d., '\u00a0\u202f\u2009]*)\s*(?<trail>-)?\s*(?<post>[^\d\s.,-]{1,3})?$/u;
const GROUP_CHAR = /[ '\u00a0\u202f\u2009]/;
const GROUP_CHARS = new RegExp(GROUP_CHAR.source, 'gu');

interface NumberReading {
  readonly decimal: '.' | ',' | null;
  readonly thousands: NumberStyle['thousands'];
  readonly ambiguous: boolean;
}

/** How one number's digits are written, or null when they are not a number. */
function readDigits(raw: string): NumberReading | null {
  const spaced = GROUP_CHAR.test(raw);
  const digits = raw.replace(GROUP_CHARS, '');
  const thin: NumberStyle['thousands'] = spaced ? (raw.includes("'") ? "'" : ' ') : null;
  if (/^\d+$/.test(digits)) return { decimal: null, thousands: thin, ambiguous: false };
  const both = /^\d{1,3}(?:([.,])\d{3})+([.,])\d+$/.exec(digits);
  if (both !== null && both[1] !== both[2]) return { decimal: both[2] as '.' | ',', thousands: both[1] as '.' | ',', ambiguous: false };
  const one = /^\d+([.,])(\d+)$/.exec(digits);
  if (one !== null) {
    const mark = one[1] as '.' | ',';
    // 1.234 or 1,234: a decimal with three places, or a thousand.
    const ambiguous = (one[2] ?? '').length === 3 && !spaced && /^\d{1,3}[.,]/.test(digits);
    return { decimal: mark, thousands: thin, ambiguous };
  }
  const grouped = /^\d{1,3}(?:([.,])\d{3})+$/.exec(digits);
  if (grouped !== null) return { decimal: null, thousands: grouped[1] as '.' | ',', ambiguous: digits.split(grouped[1] ?? '').length === 2 };
  return null;
}

function numberStyle(cells: readonly string[]): NumberStyle | null {
  let currency: string | null = null;
  let trailingMinus = false;
  const readings: NumberReading[] = [];
  for (const cell of cells) {
    const m = NUMBER_CELL.exec(cell);
    const groups = m?.groups;
    if (groups === undefined) return null;
    const around = groups['pre'] ?? groups['post'];
    if (around !== undefined) {
      if (!CURRENCY.test(around)) return null;
      currency ??= around;
    }
    if (groups['trail'] !== undefined) {
      if (groups['minus'] !== undefined) return null;
      trailingMinus = true;
    }
    const reading = readDigits((groups['digits'] ?? '').trim());
    if (reading === null) return null;
    readings.push(reading);
  }
  const sure = readings.filter((r) => !r.ambiguous);
  const marks = new Set(sure.map((r) => r.decimal).filter((d) => d !== null));
  const groupsSeen = new Set(sure.map((r) => r.thousands).filter((t) => t !== null));
  if (marks.size > 1 || groupsSeen.size > 1) return null; // two ways in one column: not one number format
  const decimal = [...marks][0] ?? null;
  const thousands = [...groupsSeen][0] ?? null;
  // An ambiguous cell is settled by the others: 1.234 beside 0,90 is a thousand; beside 12.90 it is a decimal.
  const ambiguous = readings.some((r) => r.ambiguous) && decimal === null && thousands === null;
  return { decimal, thousands, currency, trailingMinus, ambiguous };
}

const ISO = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?<zone>Z|[+-]\d{2}:?\d{2})?)?$/;
const LOCAL_DATE = /^(?<a>\d{1,4})(?<s>[./-])(?<b>\d{1,2})\k<s>(?<c>\d{2,4})(?:[ T](?<h>\d{1,2}):(?<mi>\d{2})(?::(?<sec>\d{2}))?)?$/;

interface DateShape {
  readonly sep: string;
  readonly parts: readonly [string, string, string];
  readonly hour: string | undefined;
  readonly seconds: boolean;
}

/** The one date_format that reads every cell, or null. Day-first unless a cell shows a month-first order. */
function dateFormat(cells: readonly string[]): { format: string; time: boolean; offset: boolean; unsure: boolean } | null {
  if (cells.every((c) => ISO.test(c))) {
    return { format: 'iso', time: cells.some((c) => c.length > 10), offset: cells.every((c) => c.length <= 10 || ISO.exec(c)?.groups?.['zone'] !== undefined), unsure: false };
  }
  const shapes: DateShape[] = [];
  for (const cell of cells) {
    const g = LOCAL_DATE.exec(cell)?.groups;
    if (g === undefined) return null;
    shapes.push({ sep: g['s'] ?? '.', parts: [g['a'] ?? '', g['b'] ?? '', g['c'] ?? ''], hour: g['h'], seconds: g['sec'] !== undefined });
  }
  const first = shapes[0];
  if (first === undefined || shapes.some((s) => s.sep !== first.sep)) return null;
  const yearFirst = shapes.every((s) => s.parts[0].length === 4);
  const over12 = (i: 0 | 1 | 2) => shapes.some((s) => Number(s.parts[i]) > 12);
  // Day and month told apart by a part over 12; when none is, a slash reads month first (English exports, Excel's
  // US default), a dot or a dash day first. The draft asks the question either way (dayMonthUnsure).
  let order: readonly ('Y' | 'M' | 'D')[];
  const unsure = !yearFirst && !over12(0) && !over12(1);
  if (yearFirst) order = ['Y', 'M', 'D'];
  else if (over12(0)) order = ['D', 'M', 'Y'];
  else if (over12(1) || first.sep === '/') order = ['M', 'D', 'Y'];
  else order = ['D', 'M', 'Y'];
  // D, M and H read one or two digits: a later file with 1/12/10 beside 12/1/10 is read by the same format.
  const token = (kind: 'Y' | 'M' | 'D', i: 0 | 1 | 2): string =>
    kind !== 'Y' ? kind : shapes.every((s) => s.parts[i].length === 4) ? 'YYYY' : 'YY';
  let format = order.map((k, i) => token(k, i as 0 | 1 | 2)).join(first.sep);
  const timed = shapes.filter((s) => s.hour !== undefined);
  if (timed.length > 0 && timed.length < shapes.length) return null;
  if (timed.length > 0) format += ` H:mm${shapes.every((s) => s.seconds) ? ':ss' : ''}`;
  return { format, time: timed.length > 0, offset: false, unsure };
}

/**
 * The number format of most of a column (more than half of its cells), when not every cell shares one: a scraped
 * column of `3,15 €` with a few `2.99 €` and `Precio no disponible` is a comma-decimal column whose other cells are
 * rejects, not text.
 */
function mostlyNumbers(values: readonly string[]): { style: NumberStyle; outliers: number } | null {
  const byMark = new Map<string, string[]>();
  for (const v of values) {
    const one = numberStyle([v]);
    if (one === null) continue;
    const key = one.decimal ?? 'whole';
    const same = byMark.get(key);
    if (same === undefined) byMark.set(key, [v]);
    else same.push(v);
  }
  const whole = byMark.get('whole') ?? [];
  const marks = ['.', ','].map((m) => [...(byMark.get(m) ?? []), ...whole]).sort((a, b) => b.length - a.length);
  const best = marks[0] ?? whole;
  const style = best.length > 0 ? numberStyle(best) : null;
  return style !== null && best.length > values.length / 2 ? { style, outliers: values.length - best.length } : null;
}

export function profileColumn(index: number, header: string, cells: readonly string[]): ColumnProfile {
  const nullMarkers = new Set<string>();
  const values: string[] = [];
  for (const raw of cells) {
    const cell = raw.trim();
    if (cell === '') continue;
    if (NULL_MARKERS.test(cell)) nullMarkers.add(cell);
    else values.push(cell);
  }
  const base = {
    index,
    name: header.trim() === '' ? `column_${index + 1}` : header.trim(),
    nullMarkers: [...nullMarkers],
    filled: values.length,
    outliers: 0,
    distinct: new Set(values).size,
    examples: [...new Set(values)].slice(0, 3),
  };
  if (values.length === 0) return { ...base, kind: 'empty', number: null, dateFormat: null, needsTimezone: false, dayMonthUnsure: false };
  const date = dateFormat(values);
  if (date !== null) {
    return { ...base, kind: date.time ? 'datetime' : 'date', number: null, dateFormat: date.format, needsTimezone: date.time && !date.offset, dayMonthUnsure: date.unsure };
  }
  const number = numberStyle(values);
  if (number !== null) return { ...base, kind: 'number', number, dateFormat: null, needsTimezone: false, dayMonthUnsure: false };
  const mostly = mostlyNumbers(values);
  if (mostly !== null) return { ...base, outliers: mostly.outliers, kind: 'number', number: mostly.style, dateFormat: null, needsTimezone: false, dayMonthUnsure: false };
  return { ...base, kind: 'text', number: null, dateFormat: null, needsTimezone: false, dayMonthUnsure: false };
}
