/**
 * Time, injected. Retries, Retry-After waits, file stability windows and schedules take a Clock so that tests can
 * drive time forward instead of sleeping.
 */
import { setTimeout as delay } from 'node:timers/promises';

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`; rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: async (ms, signal) => {
    await delay(Math.max(0, ms), undefined, signal ? { signal } : undefined);
  },
};

/** The calendar date of `ms` in the process's time zone, YYYY-MM-DD (as SQLite's `date('now', 'localtime')`). */
export function localDate(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}
