/**
 * When each consumer was last seen (its last request with a valid token), for `status` and the metrics. Kept in
 * memory per request and written to the state database every `flushMs`, after each offset or confirmation a consumer
 * writes, and at close, in one transaction: a busy feed costs one small write every few seconds, not one per request;
 * `status` (another process) is at most that much behind.
 */
import type { Clock } from '../clock.ts';
import type { Logger } from '../log.ts';
import { recordLastSeen } from '../store/feed-consumers.ts';
import type { StateDb } from '../store/state-db.ts';

const DEFAULT_FLUSH_MS = 5_000; // 5 s

export class LastSeen {
  readonly #db: StateDb;
  readonly #clock: Clock;
  readonly #logger: Logger;
  /** consumer -> ms since the epoch, not yet written. */
  #pending = new Map<string, number>();
  #timer: NodeJS.Timeout | null = null;

  constructor(db: StateDb, clock: Clock, logger: Logger, flushMs = DEFAULT_FLUSH_MS) {
    this.#db = db;
    this.#clock = clock;
    this.#logger = logger;
    this.#timer = setInterval(() => void this.flush(), flushMs);
    this.#timer.unref();
  }

  touch(consumer: string): void {
    this.#pending.set(consumer, this.#clock.now());
  }

  /** Writes what was seen since the last flush. A failure is logged and retried with the next flush. */
  async flush(): Promise<void> {
    if (this.#pending.size === 0 || this.#db.closed) return;
    const pending = this.#pending;
    this.#pending = new Map();
    try {
      await recordLastSeen(this.#db, new Map([...pending].map(([name, ms]) => [name, new Date(ms).toISOString()])));
    } catch (error) {
      for (const [name, ms] of pending) if (!this.#pending.has(name)) this.#pending.set(name, ms);
      this.#logger.warn({ error: (error as Error).message }, 'could not record when feed consumers were last seen; retried in a few seconds');
    }
  }

  /** Writes what is pending and stops the timer. */
  async close(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    await this.flush();
  }
}
