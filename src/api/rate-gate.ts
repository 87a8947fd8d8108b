/**
 * The per-key rate-limit gate. A 429 closes it until its Retry-After has elapsed; every request made with that key,
 * concurrent or later, waits at the gate, so no request is sent before the server said it may be.
 */
import type { Clock } from '../clock.ts';

export class RateGate {
  #openAt = 0;
  readonly #clock: Clock;

  /** `openAt`: epoch ms before which nothing is sent (a Retry-After a previous process of the agent was given). */
  constructor(clock: Clock, openAt = 0) {
    this.#clock = clock;
    this.#openAt = openAt;
  }

  /** Closes the gate until `untilMs` (epoch ms); a later 429 can only extend the wait, never shorten it. */
  closeUntil(untilMs: number): void {
    this.#openAt = Math.max(this.#openAt, untilMs);
  }

  /** Epoch ms at which the gate opens (0 or a past time when open). */
  get openAt(): number {
    return this.#openAt;
  }

  /** Resolves once the gate is open. Loops because another caller may extend the wait while we sleep. */
  async pass(signal?: AbortSignal): Promise<number> {
    let waited = 0;
    for (;;) {
      const remaining = this.#openAt - this.#clock.now();
      if (remaining <= 0) return waited;
      await this.#clock.sleep(remaining, signal);
      waited += remaining;
    }
  }
}
