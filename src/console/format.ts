/**
 * How the console writes numbers and times. Numbers are grouped (48,210) and right-aligned by their cell's class;
 * times are this host's local time with the zone (2026-11-24 09:31:02 CET), like the archive/<date>/ folders and the
 * cron schedules, with the UTC instant in the element's title and datetime. Missing values are a dash.
 */
import { WALL_CLOCK_PARTS } from '../wall-clock-format.ts';
import { html, type Html } from './html.ts';

const GROUPED = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function count(n: number | null | undefined): string {
  return n === null || n === undefined ? '–' : GROUPED.format(n);
}

export interface TimeFormat {
  /** IANA zone; default this process's (TZ, or the host's). */
  readonly timeZone?: string;
  /** The page's time: a time on the same local day is shown without its date. */
  readonly now?: Date;
}

function parts(date: Date, options: TimeFormat): Record<string, string> {
  // en-GB names European zones (CET, CEST, BST) and falls back to GMT+5:30 where no abbreviation is common.
  const format = new Intl.DateTimeFormat('en-GB', {
    ...(options.timeZone === undefined ? {} : { timeZone: options.timeZone }),
    ...WALL_CLOCK_PARTS,
    timeZoneName: 'short',
  });
  return Object.fromEntries(format.formatToParts(date).map((p) => [p.type, p.value]));
}

/**
 * "2026-11-24 09:31:02 CET" ("09:31:02 CET" when `now` is the same local day); a dash for null; the text itself
 * when it is not a time.
 */
export function localTimeText(iso: string | null | undefined, options: TimeFormat = {}): string {
  if (iso === null || iso === undefined || iso === '') return '–';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const p = parts(date, options);
  const day = `${p['year']}-${p['month']}-${p['day']}`;
  const time = `${p['hour']}:${p['minute']}:${p['second']} ${p['timeZoneName']}`;
  if (options.now !== undefined) {
    const today = parts(options.now, options);
    if (day === `${today['year']}-${today['month']}-${today['day']}`) return time;
  }
  return `${day} ${time}`;
}

export function localTime(iso: string | null | undefined, options: TimeFormat = {}): Html {
  const text = localTimeText(iso, options);
  if (iso === null || iso === undefined || text === iso || text === '–') return html`${text}`;
  const full = localTimeText(iso, { ...options, now: undefined });
  return html`<time datetime="${new Date(iso).toISOString()}" title="${full} (${new Date(iso).toISOString()})">${text}</time>`;
}

/** The zone times are shown in, for the page's footer ("Europe/Berlin"). */
export function zoneName(options: TimeFormat = {}): string {
  return options.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** A date-only value (effective dates, watermarks of date-only streams) stays as it is: it has no zone. */
export function dateOrTime(value: string | null | undefined, options: TimeFormat = {}): Html {
  if (value !== null && value !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(value)) return html`${value}`;
  return localTime(value, options);
}
