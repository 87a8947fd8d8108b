/**
 * The per-key rate-limit gate. A 429 closes it until its Retry-After has elapsed; every request made with that key,
 * concurrent or later, waits at the gate, so no request is sent before the server said it may be. The gate also
 * honours a window another process was given (`shared`: the state database's record, read at every pass), and it
 * is asked once more at the very moment a request goes on the wire (`isClosed`, transport.ts).
 */
import type { Clock } from '../clock.ts';

export class RateGate {
  #openAt = 0;
  readonly #clock: Clock;
  readonly #shared: () => Promise<number>;

  /** `shared`: epoch ms before which nothing is sent, as recorded by any process of the agent (0: none). */
  constructor(clock: Clock, shared: () => Promise<number> = () => Promise.resolve(0)) {
    this.#clock = clock;
    this.#shared = shared;
  }

  /** Closes the gate until `untilMs` (epoch ms); a later 429 can only extend the wait, never shorten it. */
  closeUntil(untilMs: number): void {
    this.#openAt = Math.max(this.#openAt, untilMs);
  }

  /** Epoch ms at which this process's window ends (0 or a past time when open; the shared one is read by `pass`). */
  get openAt(): number {
    return this.#openAt;
  }

  /** Whether a request sent now would be inside a window this process knows of (no database read: hot path). */
  isClosed(): boolean {
    return this.#openAt > this.#clock.now();
  }

  /** Resolves once the gate is open. Loops because another caller may extend the wait while we sleep. */
  async pass(signal?: AbortSignal): Promise<number> {
    let waited = 0;
    for (;;) {
      const remaining = Math.max(this.#openAt, await this.#shared()) - this.#clock.now();
      if (remaining <= 0) return waited;
      await this.#clock.sleep(remaining, signal);
      waited += remaining;
    }
  }
}
