/**
 * Per-token rate limit of the feed: a token bucket per key (a consumer's name; for requests without a valid token,
 * the client's address). A bucket holds `burst` requests and refills at `perSecond`; an empty bucket answers how
 * long until the next request may pass, which the listener sends as Retry-After. Buckets live in memory: a restart
 * forgets them, which costs nothing but a fresh burst.
 */
export interface RateLimitSettings {
  readonly perSecond: number;
  readonly burst: number;
}

export type RateDecision = { readonly ok: true } | { readonly ok: false; readonly retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  at: number;
}

/** Buckets not touched for this long are dropped (they would be full again anyway). */
const IDLE_MS = 10 * 60 * 1000; // 10 min

export class RateLimiter {
  #settings: RateLimitSettings;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();
  #swept: number;

  constructor(settings: RateLimitSettings, now: () => number) {
    this.#settings = settings;
    this.#now = now;
    this.#swept = now();
  }

  /** New settings (SIGHUP); buckets keep what they hold, capped at the new burst. */
  configure(settings: RateLimitSettings): void {
    this.#settings = settings;
    for (const bucket of this.#buckets.values()) bucket.tokens = Math.min(bucket.tokens, settings.burst);
  }

  /** Takes one request from `key`'s bucket. */
  take(key: string): RateDecision {
    const now = this.#now();
    const { perSecond, burst } = this.#settings;
    this.#sweep(now);
    const bucket = this.#buckets.get(key) ?? { tokens: burst, at: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * perSecond);
    bucket.at = now;
    this.#buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond)) };
  }

  #sweep(now: number): void {
    if (now - this.#swept < IDLE_MS) return;
    this.#swept = now;
    for (const [key, bucket] of this.#buckets) if (now - bucket.at > IDLE_MS) this.#buckets.delete(key);
  }
}
