/**
 * The apply deadline, watched by the daemon: every `intervalMs` it computes the feed overview and logs, once per
 * store and episode, a warning for a store that became overdue (prices due and not confirmed `feed.apply_deadline`
 * after they were stored), and an info line when it has caught up. Which stores were warned about is kept in memory:
 * after a restart a store still overdue is warned about once more.
 *
 * It also serves the overview to the metrics, computed at most once per `maxAgeMs` however many gauges read it.
 */
import type { Clock } from '../clock.ts';
import type { FeedConfig } from '../config/feed-schema.ts';
import type { Logger } from '../log.ts';
import type { StateDb } from '../store/state-db.ts';
import { type FeedOverview, feedOverview } from './consumer-status.ts';

export interface ApplyDeadlineOptions {
  readonly db: StateDb;
  readonly feed: () => FeedConfig;
  readonly clock: Clock;
  readonly logger: Logger;
  /** How often the deadline is checked. */
  readonly intervalMs?: number;
}

const DEFAULT_INTERVAL_MS = 60_000; // 1 min

export class ApplyDeadlineMonitor {
  readonly #o: ApplyDeadlineOptions;
  /** `consumer \0 store` of the stores warned about and not caught up since. */
  readonly #flagged = new Set<string>();
  #latest: { at: number; overview: Promise<FeedOverview> } | null = null;
  #timer: NodeJS.Timeout | null = null;

  constructor(options: ApplyDeadlineOptions) {
    this.#o = options;
  }

  start(): this {
    this.#timer = setInterval(() => void this.#safeCheck(), this.#o.intervalMs ?? DEFAULT_INTERVAL_MS);
    this.#timer.unref();
    return this;
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** The overview, computed again when the last one is older than `maxAgeMs` (readers at once share one read). */
  overview(maxAgeMs = 1_000): Promise<FeedOverview> {
    const latest = this.#latest;
    if (latest && this.#o.clock.now() - latest.at <= maxAgeMs) return latest.overview;
    return this.#compute();
  }

  #compute(): Promise<FeedOverview> {
    const now = this.#o.clock.now();
    const overview = feedOverview(this.#o.db, this.#o.feed(), now);
    this.#latest = { at: now, overview };
    overview.catch(() => {
      if (this.#latest?.overview === overview) this.#latest = null; // a failed read is not served again
    });
    return overview;
  }

  /** Checks the deadline now and logs what changed since the last check. */
  async check(): Promise<FeedOverview> {
    const overview = await this.#compute();
    const current = new Set<string>();
    for (const store of overview.overdue) {
      const key = `${store.consumer}\u0000${store.store_id}`;
      current.add(key);
      if (this.#flagged.has(key)) continue;
      this.#flagged.add(key);
      this.#o.logger.warn(
        { consumer: store.consumer, store_id: store.store_id, rows: store.rows, oldest_recorded_at: store.oldest_recorded_at, apply_deadline: overview.apply_deadline },
        `store ${store.store_id} (${store.consumer}) has not applied ${store.rows} due price change(s) within ${overview.apply_deadline}; check the store's POS`,
      );
    }
    for (const key of [...this.#flagged]) {
      if (current.has(key)) continue;
      this.#flagged.delete(key);
      const [consumer, storeId] = key.split('\u0000');
      this.#o.logger.info({ consumer, store_id: storeId }, 'store has applied its overdue price changes');
    }
    return overview;
  }

  async #safeCheck(): Promise<void> {
    try {
      await this.check();
    } catch (error) {
      if (!this.#o.db.closed) this.#o.logger.warn({ error: (error as Error).message }, 'could not check the feed apply deadline; tried again at the next check');
    }
  }
}
