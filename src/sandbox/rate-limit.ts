/**
 * Per-key rate limit (off unless configured): a fixed window of `window_seconds` allowing `requests` requests.
 * The request over the limit gets 429 with Retry-After (delta seconds, or an HTTP-date, as configured), and the
 * key's window stays closed until the moment that header named. Every request that arrives for that key while the
 * window is still closed is recorded as an "early request" (and answered 429 again): an agent that honours
 * Retry-After produces none.
 *
 * With the HTTP-date form the closing moment is rounded up to a whole second, since the date has no fractions.
 */
import { z } from 'zod';
import { isoTime } from './http-io.ts';

export const RateLimitConfig = z.strictObject({
  requests: z.number().int().min(0),
  window_seconds: z.number().positive().default(1),
  retry_after_format: z.enum(['seconds', 'http-date']).default('seconds'),
});
export type RateLimitConfig = z.output<typeof RateLimitConfig>;
export type RateLimitInput = z.input<typeof RateLimitConfig>;

export interface EarlyRequest {
  readonly at: string;
  readonly method: string;
  readonly path: string;
  /** When the window the client was told about opens again. */
  readonly retry_after_until: string;
}

interface Window {
  start: number;
  count: number;
  closedUntil: number;
}

export interface Limited {
  readonly retryAfter: string;
}

export class RateLimiter {
  #config: RateLimitConfig | null = null;
  readonly #windows = new Map<string, Window>();
  readonly early: EarlyRequest[] = [];
  #limited = 0;

  get config(): RateLimitConfig | null {
    return this.#config;
  }

  /** Number of 429 answers (early requests included). */
  get limited(): number {
    return this.#limited;
  }

  configure(config: RateLimitConfig | null): void {
    this.#config = config;
    this.#windows.clear();
  }

  /** Counts the request; returns the Retry-After value when it must be refused. */
  check(keyId: string, now: number, method: string, path: string): Limited | null {
    const config = this.#config;
    if (config === null) return null;
    let window = this.#windows.get(keyId);
    if (window && now < window.closedUntil) {
      this.early.push({ at: isoTime(now), method, path, retry_after_until: isoTime(window.closedUntil) });
      this.#limited += 1;
      return { retryAfter: this.#header(window.closedUntil, now, config) };
    }
    const windowMs = config.window_seconds * 1000;
    if (!window || now >= window.start + windowMs) {
      window = { start: now, count: 0, closedUntil: 0 };
      this.#windows.set(keyId, window);
    }
    window.count += 1;
    if (window.count <= config.requests) return null;
    const seconds = Math.max(1, Math.ceil((window.start + windowMs - now) / 1000));
    let until = now + seconds * 1000;
    if (config.retry_after_format === 'http-date') until = Math.ceil(until / 1000) * 1000;
    window.closedUntil = until;
    this.#limited += 1;
    return { retryAfter: this.#header(until, now, config) };
  }

  #header(until: number, now: number, config: RateLimitConfig): string {
    if (config.retry_after_format === 'http-date') return new Date(until).toUTCString();
    return String(Math.max(1, Math.ceil((until - now) / 1000)));
  }
}
