/**
 * Wall-clock times of a time zone to UTC, for `timezone:` sources (the API converts nothing: every timestamp it
 * takes is UTC or carries its offset).
 *
 * Decision for the two hours a year that daylight saving time makes ambiguous, the same as JavaScript's Temporal
 * ('compatible') and java.time:
 * - a time in the gap of a spring-forward (02:30 on the night clocks go 02:00 -> 03:00) does not exist: it is read
 *   with the offset before the change, so it lands one hour later on the clock (03:30 local, 01:30 UTC in Berlin);
 * - a time in the overlap of a fall-back (02:30 on the night clocks go 03:00 -> 02:00) happens twice: the earlier
 *   one is taken (still daylight saving time).
 * Exports written by tills and ERPs at those hours are rare; the decision is written in docs/mapping.md.
 *
 * Offsets come from Intl (the system's time zone data, as Node ships it). They are cached per local minute, so a
 * file of millions of timestamps asks Intl a few times per distinct minute, not per row.
 */
import { WALL_CLOCK_PARTS } from '../../wall-clock-format.ts';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/** Distinct local minutes remembered per zone before the cache starts over (a year of minutes is 525,600). */
const CACHE_LIMIT = 200_000;

export class TimeZone {
  readonly name: string;
  readonly #format: Intl.DateTimeFormat;
  /** Local minute (ms since epoch of the wall-clock time read as UTC, / 60000) -> offset in ms to subtract. */
  readonly #offsets = new Map<number, number>();

  constructor(name: string) {
    this.name = name;
    this.#format = new Intl.DateTimeFormat('en-US', { timeZone: name, ...WALL_CLOCK_PARTS });
  }

  /** The zone's offset from UTC at `instant` (ms), in ms (east positive). */
  offsetAt(instant: number): number {
    const parts: Record<string, number> = {};
    for (const part of this.#format.formatToParts(new Date(instant))) {
      if (part.type !== 'literal') parts[part.type] = Number(part.value);
    }
    const local = Date.UTC(parts['year'] ?? 0, (parts['month'] ?? 1) - 1, parts['day'] ?? 1, parts['hour'] ?? 0, parts['minute'] ?? 0, parts['second'] ?? 0);
    const whole = instant - (instant % 1000 + 1000) % 1000;
    return local - whole;
  }

  /** The UTC instant (ms) of a wall-clock time, given as ms since epoch as if it were UTC. */
  toUtc(local: number): number {
    const minute = Math.floor(local / MINUTE);
    let offset = this.#offsets.get(minute);
    if (offset === undefined) {
      offset = this.#resolve(minute * MINUTE);
      if (this.#offsets.size >= CACHE_LIMIT) this.#offsets.clear();
      this.#offsets.set(minute, offset);
    }
    return local - offset;
  }

  /** The offset that applies to a local time (whole minute): the only one, the earlier one (overlap), or the one before (gap). */
  #resolve(local: number): number {
    const before = this.offsetAt(local - DAY);
    const after = this.offsetAt(local + DAY);
    const fits = (offset: number) => this.offsetAt(local - offset) === offset;
    // Offsets east of UTC are larger: the earlier of two instants is the one with the larger offset.
    const candidates = [...new Set([before, after])].filter(fits).sort((a, b) => b - a);
    return candidates[0] ?? before;
  }
}
