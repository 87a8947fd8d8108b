/**
 * `date_format` entries compiled to converters that give the API's ISO 8601 forms: `YYYY-MM-DD` for date
 * fields, `YYYY-MM-DDTHH:mm:ssZ` for datetime fields. Formats are tried in the configured order; the first
 * that matches the whole cell decides (the config refuses lists where day and month could swap).
 *
 * Decisions, following the spec ("all timestamps are ISO 8601 in UTC; no timezone conversion is done"):
 * - a time without an offset is taken as UTC: `01.03.2026 10:00` -> `2026-03-01T10:00:00Z`, or, when the source
 *   sets `timezone`, as that zone's wall-clock time, converted to UTC (time-zone.ts decides the DST gap and
 *   overlap);
 * - a date without a time in a datetime field is midnight (UTC, or in `timezone`);
 * - a two-digit year (`YY`) is 2000-2068 for 00-68 and 1969-1999 for 69-99, the POSIX rule of strptime's %y;
 * - a datetime in a date field is accepted only at midnight (ERPs write `01.03.2026 00:00:00` for dates);
 *   any other time of day is a reject, not silently dropped;
 * - `iso` accepts `YYYY-MM-DD`, and `YYYY-MM-DD[T ]HH:mm[:ss[.fff]][Z|±HH[:]mm]`; an explicit offset is kept
 *   (normalised to ±HH:mm), none means UTC.
 * Calendar validity is checked (31.02.2026 is a reject, not 3 March).
 */
import { tokenizeDateFormat } from '../../config/source-schema.ts';
import type { DateToken } from '../../config/source-schema.ts';
import { CellError, shown } from './convert.ts';
import type { Converter } from './convert.ts';
import type { TimeZone } from './time-zone.ts';

interface Parts {
  year: string;
  month: string;
  day: string;
  hour: string;
  minute: string;
  second: string;
  fraction: string;
  offset: string;
}

type Matcher = (cell: string) => Parts | null;

/** Two-digit years up to this are 20YY, above it 19YY (POSIX strptime %y: 00-68 -> 2000-2068, 69-99 -> 1969-1999). */
export const TWO_DIGIT_PIVOT = 68;

const TOKEN_PATTERN: Record<DateToken, string> = {
  YYYY: '(?<year>\\d{4})',
  YY: '(?<yy>\\d{2})',
  MM: '(?<month>\\d{2})',
  M: '(?<month>\\d{1,2})',
  DD: '(?<day>\\d{2})',
  D: '(?<day>\\d{1,2})',
  HH: '(?<hour>\\d{2})',
  H: '(?<hour>\\d{1,2})',
  mm: '(?<minute>\\d{2})',
  ss: '(?<second>\\d{2})',
};

const ISO =
  /^(?<year>\d{4})-(?<month>\d{2})-(?<day>\d{2})(?:[T ](?<hour>\d{2}):(?<minute>\d{2})(?::(?<second>\d{2})(?<fraction>\.\d{1,9})?)?(?<offset>Z|[+-]\d{2}:?\d{2})?)?$/;

function fromGroups(groups: Record<string, string | undefined> | undefined): Parts | null {
  if (groups === undefined) return null;
  const pad = (value: string | undefined, fallback: string) => (value ?? fallback).padStart(2, '0');
  const yy = groups['yy'];
  return {
    year: yy === undefined ? (groups['year'] ?? '') : `${Number(yy) <= TWO_DIGIT_PIVOT ? '20' : '19'}${yy}`,
    month: pad(groups['month'], ''),
    day: pad(groups['day'], ''),
    hour: pad(groups['hour'], '00'),
    minute: pad(groups['minute'], '00'),
    second: pad(groups['second'], '00'),
    fraction: groups['fraction'] ?? '',
    offset: groups['offset'] ?? '',
  };
}

/** A matcher for one configured format; throws on a format the config should have refused. */
function compileFormat(format: string): Matcher {
  if (format === 'iso') return (cell) => fromGroups(ISO.exec(cell)?.groups);
  const parts = tokenizeDateFormat(format);
  if (typeof parts === 'string') throw new Error(`date_format ${format}: ${parts}`);
  const source = parts
    .map((part) => ('token' in part ? TOKEN_PATTERN[part.token] : part.literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  const regex = new RegExp(`^${source}$`);
  return (cell) => fromGroups(regex.exec(cell)?.groups);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function validDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return day <= (month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0));
}

function isValid(parts: Parts): boolean {
  if (!validDate(Number(parts.year), Number(parts.month), Number(parts.day))) return false;
  if (Number(parts.hour) > 23 || Number(parts.minute) > 59 || Number(parts.second) > 59) return false;
  if (parts.offset.length > 1) {
    const digits = parts.offset.replace(':', '');
    if (Number(digits.slice(1, 3)) > 23 || Number(digits.slice(3, 5)) > 59) return false;
  }
  return true;
}

function offsetOf(parts: Parts): string {
  if (parts.offset === '' || parts.offset === 'Z') return 'Z';
  return parts.offset.includes(':') ? parts.offset : `${parts.offset.slice(0, 3)}:${parts.offset.slice(3)}`;
}

/** The cell forms that `iso` gives back unchanged: `YYYY-MM-DD` and `YYYY-MM-DDTHH:mm:ss[.f]{Z|±HH:mm}`. */
const CANONICAL = {
  date: /^\d{4}-\d{2}-\d{2}$/,
  datetime: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/,
} as const;

/** Two ASCII digits at `at` as a number (the caller checked they are digits). */
function twoDigits(cell: string, at: number): number {
  return (cell.charCodeAt(at) - 48) * 10 + (cell.charCodeAt(at + 1) - 48);
}

/**
 * The fast path of `iso` for a cell already in the form the API takes (most machine-written files): true when the
 * cell matches CANONICAL and is a valid date and time, so the converter can return it as it is. False sends the
 * cell down the general path, which gives the same result for every cell this accepts (a property test checks it)
 * and the error message for the others.
 */
function canonicalAndValid(cell: string, kind: 'date' | 'datetime'): boolean {
  if (!CANONICAL[kind].test(cell)) return false;
  const year = twoDigits(cell, 0) * 100 + twoDigits(cell, 2);
  if (!validDate(year, twoDigits(cell, 5), twoDigits(cell, 8))) return false;
  if (kind === 'date') return true;
  if (twoDigits(cell, 11) > 23 || twoDigits(cell, 14) > 59 || twoDigits(cell, 17) > 59) return false;
  const end = cell.length;
  return cell[end - 1] === 'Z' || (twoDigits(cell, end - 5) <= 23 && twoDigits(cell, end - 2) <= 59);
}

/** `YYYY-MM-DDTHH:mm:ss.fffZ` of a wall-clock time in `zone`. */
function inUtc(parts: Parts, zone: TimeZone): string {
  const at = new Date(0); // setUTCFullYear, unlike Date.UTC, does not read years 0-99 as 1900-1999
  at.setUTCFullYear(Number(parts.year), Number(parts.month) - 1, Number(parts.day));
  at.setUTCHours(Number(parts.hour), Number(parts.minute), Number(parts.second), 0);
  const local = at.getTime();
  const utc = new Date(zone.toUtc(local)).toISOString(); // 2026-03-01T09:00:00.000Z; years 0000-9999 keep 4 digits
  return `${utc.slice(0, 19)}${parts.fraction}Z`;
}

/**
 * A converter for a date (`kind: 'date'`) or datetime field, trying `formats` in order. `zone`: the time zone of
 * datetimes written without an offset (none: UTC).
 */
export function dateConverter(formats: readonly string[], kind: 'date' | 'datetime', zone?: TimeZone): Converter {
  const matchers = formats.map(compileFormat);
  const code = kind === 'date' ? 'date_parsing' : 'datetime_parsing';
  const expected = formats.join(' or ');
  // Only when `iso` is tried first: otherwise an earlier format could match the cell and decide differently.
  const isoFirst = formats[0] === 'iso';
  return (cell) => {
    if (isoFirst && canonicalAndValid(cell, kind)) return cell;
    for (const match of matchers) {
      const parts = match(cell);
      if (parts === null) continue;
      if (!isValid(parts)) return new CellError(code, `${shown(cell)} is not a valid ${kind}`);
      const date = `${parts.year}-${parts.month}-${parts.day}`;
      if (kind === 'datetime') {
        if (zone !== undefined && parts.offset === '') return inUtc(parts, zone);
        return `${date}T${parts.hour}:${parts.minute}:${parts.second}${parts.fraction}${offsetOf(parts)}`;
      }
      const midnight = `${parts.hour}${parts.minute}${parts.second}` === '000000' && /^\.?0*$/.test(parts.fraction);
      if (!midnight || offsetOf(parts) !== 'Z') {
        return new CellError(code, `${shown(cell)} has a time of day; ${kind} fields take a date only`);
      }
      return date;
    }
    return new CellError(code, `${shown(cell)} does not match date_format ${expected}`);
  };
}

/** Compiles every format once, so that a bad format fails when the source is compiled, not on a row. */
export function checkDateFormats(formats: readonly string[]): void {
  formats.forEach(compileFormat);
}
