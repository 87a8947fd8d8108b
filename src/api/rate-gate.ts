/**
 * The per-key rate-limit gate. A 429 (or a 503 with Retry-After) closes it until its Retry-After has elapsed; every
 * request made with that key, concurrent or later, waits at the gate, so no request is sent before the server said
 * it may be. The gate also honours a window another process was given (`shared`: the state database's record, read
 * at every pass and again every GATE_RECHECK_MS while waiting), and it is asked once more at the very moment a
 * request goes on the wire (`isClosed`, transport.ts).
 *
 * Bounds (issue 27, point 2): a window is never longer than api.max_retry_after after it was recorded (the
 * transport caps what it records; the gate caps what it reads back, e.g. a window stored by an older version), and
 * a wait is slept in slices of GATE_RECHECK_MS: no timer is ever armed beyond Node's 2^31-1 ms limit, and a window
 * ended by `pricing-agent api clear-wait` (which records when it cleared) is noticed within one slice, by a daemon
 * too. A window is shown with its reason (status, method, path) in status, /readyz and the console.
 */
import type { Clock } from '../clock.ts';
import { ApiWaitError } from './errors.ts';
import { boundedWindowEnd, DEFAULT_MAX_RETRY_AFTER_MS } from './retry-policy.ts';

/** A waiting request looks at the shared window (a clear-wait, another process's 429) this often. */
export const GATE_RECHECK_MS = 5_000; // 5 s

/** A Retry-After window and why it was opened. */
export interface WaitWindow {
  /** Epoch ms before which nothing is sent. */
  untilMs: number;
  /** The status that carried the Retry-After (429, or 503 from a proxy). */
  status: number;
  method: string;
  /** The request path, without the query. */
  path: string;
  /** Epoch ms at which the window was recorded. */
  recordedAtMs: number;
}

/** What the agent's processes share (src/store/api-state.ts): the longest window, and the last clear-wait. */
export interface SharedWindow {
  window: WaitWindow | null;
  /** Epoch ms of the last `api clear-wait` (0: never): windows recorded before it are over. */
  clearedAtMs: number;
}

const NO_SHARED: SharedWindow = { window: null, clearedAtMs: 0 };

/** "until 2026-11-22T10:15:00.000Z (429 on GET /v1/auth/verify)": one wording for every place that shows it. */
export function describeWindow(window: WaitWindow): string {
  return `until ${new Date(window.untilMs).toISOString()} (${window.status} on ${window.method} ${window.path})`;
}

/**
 * The window in force at `nowMs`: the shared one (unless a clear-wait came after it), bounded by `capMs` after it was
 * recorded, or this process's own, whichever ends later; null when none is open. The one rule for the gate, `status`
 * and the console.
 */
export function windowInForce(shared: SharedWindow, local: WaitWindow | null, capMs: number, nowMs: number): WaitWindow | null {
  const stored = shared.window;
  const bounded = stored !== null && stored.recordedAtMs > shared.clearedAtMs
    ? { ...stored, untilMs: boundedWindowEnd(stored.untilMs, stored.recordedAtMs, capMs) }
    : null;
  const mine = local !== null && local.recordedAtMs > shared.clearedAtMs ? local : null;
  const longest = bounded !== null && (mine === null || bounded.untilMs > mine.untilMs) ? bounded : mine;
  return longest !== null && longest.untilMs > nowMs ? longest : null;
}

export class RateGate {
  #local: WaitWindow | null = null;
  #lastShared: SharedWindow = NO_SHARED;
  readonly #clock: Clock;
  readonly #shared: () => Promise<SharedWindow>;
  readonly #capMs: number;

  /** `shared`: the windows recorded by any process of the agent; `capMs`: api.max_retry_after. */
  constructor(clock: Clock, shared: () => Promise<SharedWindow> = () => Promise.resolve(NO_SHARED), capMs = DEFAULT_MAX_RETRY_AFTER_MS) {
    this.#clock = clock;
    this.#shared = shared;
    this.#capMs = capMs;
  }

  /** Closes the gate until `window.untilMs`; a later 429 can only extend the wait, never shorten it. */
  closeUntil(window: WaitWindow): void {
    if (this.#local === null || window.untilMs > this.#local.untilMs) this.#local = window;
  }

  /** Epoch ms at which this process's window ends (0 or a past time when open; the shared one is read by `pass`). */
  get openAt(): number {
    return this.#local?.untilMs ?? 0;
  }

  /** Whether a request sent now would be inside a window this process knows of (no database read: hot path). */
  isClosed(): boolean {
    return this.openAt > this.#clock.now();
  }

  /** The window in force as last seen (this process's or the shared one, whichever ends later); null when open. */
  current(): WaitWindow | null {
    if (this.#local !== null && this.#local.recordedAtMs <= this.#lastShared.clearedAtMs) this.#local = null;
    return windowInForce(this.#lastShared, this.#local, this.#capMs, this.#clock.now());
  }

  /** Reads the shared window again and returns the one in force. */
  async refresh(): Promise<WaitWindow | null> {
    this.#lastShared = await this.#shared();
    return this.current();
  }

  /**
   * Resolves once the gate is open. Loops because another caller may extend the wait, or a clear-wait end it, while
   * we sleep. A window longer than `maxWaitMs` away is not waited for (ApiWaitError): `check` and `status` say it.
   */
  async pass(signal?: AbortSignal, maxWaitMs = Number.POSITIVE_INFINITY): Promise<number> {
    let waited = 0;
    for (;;) {
      const window = await this.refresh();
      const remaining = window === null ? 0 : window.untilMs - this.#clock.now();
      if (window === null || remaining <= 0) return waited;
      if (remaining > maxWaitMs) throw new ApiWaitError(window, describeWindow(window));
      const slice = Math.min(remaining, GATE_RECHECK_MS);
      await this.#clock.sleep(slice, signal);
      waited += slice;
    }
  }
}
