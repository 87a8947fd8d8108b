/**
 * Requests on the wire at once, bounded by `api.max_connections`. A request takes a slot before it passes the rate
 * gate and keeps it until its response is read. Without this, a request beyond the dispatcher's connection limit
 * passes the gate, waits in undici's queue, and is sent the moment a connection frees: possibly right after the
 * 429 that closed the gate came back on that very connection (found by the chaos suite: early requests inside a
 * Retry-After window).
 */
export class RequestSlots {
  readonly #limit: number;
  #used = 0;
  readonly #waiting: (() => void)[] = [];

  /** `limit` Infinity: no bound (a client without a configured connection limit). */
  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Resolves with a release function once a slot is free; rejects when `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (this.#used < this.#limit) {
      this.#used += 1;
      return Promise.resolve(this.#releaser());
    }
    return new Promise((resolve, reject) => {
      const wake = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(this.#releaser());
      };
      const onAbort = () => {
        const at = this.#waiting.indexOf(wake);
        if (at >= 0) this.#waiting.splice(at, 1);
        reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(wake);
    });
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next) next(); // the slot passes straight to the next waiter
      else this.#used -= 1;
    };
  }
}
