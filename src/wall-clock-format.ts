/**
 * The numeric parts of a wall-clock time for Intl.DateTimeFormat: year, two-digit month, day, hour, minute and
 * second, on a 24-hour clock (h23: midnight is 00, never 24). Read back with formatToParts by the console's local
 * times (console/format.ts) and by the time-zone offsets of `timezone:` sources (ingest/read/time-zone.ts).
 */
export const WALL_CLOCK_PARTS = {
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
} as const satisfies Intl.DateTimeFormatOptions;
