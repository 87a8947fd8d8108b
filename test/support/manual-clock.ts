import type { Clock } from '../../src/clock.ts';

interface Sleeper {
  wakeAt: number;
  resolve: () => void;
}

/**
 * A clock that only moves when told. `advance(ms)` wakes every sleeper whose time has come, in order, and lets
 * their continuations run before returning, so a test reads as "advance 30 s, then assert".
 */
export class ManualClock implements Clock {
  #now: number;
  #sleepers: Sleeper[] = [];
  /** Every sleep ever requested, in order (ms): lets tests assert backoff schedules. */
  readonly sleeps: number[] = [];

  constructor(start = Date.parse('2026-11-22T10:00:00Z')) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    if (ms <= 0 && !signal?.aborted) {
      // A due timer fires without the clock moving, as a real one does on the next turn of the event loop.
      return new Promise((resolve) => setImmediate(resolve));
    }
    return new Promise((resolve, reject) => {
      const sleeper: Sleeper = { wakeAt: this.#now + Math.max(0, ms), resolve };
      this.#sleepers.push(sleeper);
      signal?.addEventListener(
        'abort',
        () => {
          this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
          reject(signal.reason as Error);
        },
        { once: true },
      );
    });
  }

  /** Number of pending sleepers. */
  get waiting(): number {
    return this.#sleepers.length;
  }

  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    for (;;) {
      this.#sleepers.sort((a, b) => a.wakeAt - b.wakeAt);
      const next = this.#sleepers[0];
      if (!next || next.wakeAt > target) break;
      this.#sleepers.shift();
      this.#now = next.wakeAt;
      next.resolve();
      await flush();
    }
    this.#now = target;
    await flush();
  }

  /** Waits until at least `count` sleepers are pending (the code under test reached its wait). */
  async untilWaiting(count = 1, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.#sleepers.length < count) {
      if (Date.now() > deadline) throw new Error(`ManualClock: expected ${count} sleeper(s), have ${this.#sleepers.length}`);
      await new Promise((r) => setImmediate(r));
    }
  }
}

async function flush(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await new Promise((r) => setImmediate(r));
}

/**
 * Runs `promise` to completion, advancing the clock through every sleep it starts (a minute at a time), so a test
 * of a retry schedule finishes at once and can then assert `clock.sleeps`.
 */
export async function drive<T>(clock: ManualClock, promise: Promise<T>): Promise<T> {
  let settled = false;
  const tracked = promise.finally(() => {
    settled = true;
  });
  tracked.catch(() => undefined);
  while (!settled) {
    await new Promise((r) => setImmediate(r));
    if (clock.waiting > 0) await clock.advance(60_000);
  }
  return tracked;
}
