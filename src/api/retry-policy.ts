/**
 * When to try again, and how long to wait first. Pure functions of the attempt number, the failure and a random
 * source, so every row of the policy is tested without a network or a clock.
 */
import { RETRY_BASE_MS, RETRY_CAP_MS, RETRY_MAX_ATTEMPTS } from './schemas/index.ts';
import type { RetryClass } from './operations.ts';

/** Transport failures that happen before a single byte of the request reached the server. */
const NEVER_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * Transport failures that a new attempt cannot cure: the server's TLS certificate is not trusted (a proxy that
 * inspects TLS, an expired certificate). Retrying them only delays the message that says what to do.
 */
export const TLS_ERROR_CODES: ReadonlySet<string> = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'EPROTO',
]);

export type Failure =
  | { kind: 'status'; status: number }
  | { kind: 'transport'; code: string | undefined };

export function neverReachedServer(code: string | undefined): boolean {
  return code !== undefined && NEVER_SENT_CODES.has(code);
}

/**
 * Whether `failure` of attempt number `attempt` (1-based) is retried. 429 is not decided here: it always waits for
 * Retry-After and does not use up an attempt, because the server refused the request without processing it.
 */
export function shouldRetry(retry: RetryClass, failure: Failure, attempt: number, maxAttempts = RETRY_MAX_ATTEMPTS): boolean {
  if (attempt >= maxAttempts) return false;
  if (failure.kind === 'status') {
    return failure.status >= 500 && retry !== 'unsafe';
  }
  if (failure.code !== undefined && TLS_ERROR_CODES.has(failure.code)) return false;
  return retry !== 'unsafe' || neverReachedServer(failure.code);
}

/**
 * Exponential backoff: 1 s, 2 s, 4 s, 8 s ... capped at 30 s, plus up to 25 % jitter so that many agents do not
 * retry in step. Never shorter than the spec's schedule and never above the cap.
 */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const exponential = RETRY_BASE_MS * 2 ** Math.max(0, attempt - 1);
  const jittered = exponential * (1 + 0.25 * random());
  return Math.min(RETRY_CAP_MS, Math.round(jittered));
}

/**
 * The shortest wait after a 429 (or a 503 with Retry-After), and the wait when it carries no usable Retry-After.
 * "Retry now" is never taken at its word: a Retry-After of 0, a date already past (a server whose clock is behind
 * the agent's) or a tiny value would otherwise send the next request at once, and a 429 uses up no attempt
 * (docs/api-assumptions.md), so a server answering that way would be hammered without pause.
 */
export const DEFAULT_RETRY_AFTER_MS = 1_000; // 1 s

/**
 * The longest Retry-After the agent honours (api.max_retry_after). One 429 with `Retry-After: 3000000` (35 days)
 * stopped every push and pull and survived restarts (issue 27, point 2): the server's advice is honoured within
 * this bound, and `pricing-agent api clear-wait` ends a window early.
 */
export const DEFAULT_MAX_RETRY_AFTER_MS = 15 * 60 * 1000; // 15 min

/** An HTTP-date starts with the day's name (IMF-fixdate, RFC 850 and asctime all do): "1.5" or "-1" is none. */
const HTTP_DATE = /^[A-Za-z]{3}/;

/**
 * Parses Retry-After as delta-seconds or as an HTTP-date, and returns the wait, at least DEFAULT_RETRY_AFTER_MS and at
 * most `capMs` (api.max_retry_after). A date is read against the response's own `Date` (`serverNowMs`) when it has
 * one, so that a difference between the server's clock and the agent's moves no wait; otherwise against `nowMs`. A
 * value that is neither waits DEFAULT_RETRY_AFTER_MS.
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number, capMs = DEFAULT_MAX_RETRY_AFTER_MS, serverNowMs?: number): number {
  return Math.min(capMs, Math.max(DEFAULT_RETRY_AFTER_MS, uncappedRetryAfter(value, serverNowMs ?? nowMs)));
}

function uncappedRetryAfter(value: string | string[] | undefined, nowMs: number): number {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return DEFAULT_RETRY_AFTER_MS;
  const text = raw.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = HTTP_DATE.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(at) ? DEFAULT_RETRY_AFTER_MS : at - nowMs;
}

/**
 * The end of a stored window as the agent honours it: never later than `capMs` after it was recorded (a window
 * stored by an older version, or before api.max_retry_after was lowered, is bounded when read back at start).
 */
export function boundedWindowEnd(untilMs: number, recordedAtMs: number, capMs: number): number {
  return Math.min(untilMs, recordedAtMs + capMs);
}
