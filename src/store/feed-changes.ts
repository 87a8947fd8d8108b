/**
 * How a reader in the daemon (the feed's long-polls) learns that price_feed grew, without querying the table in a
 * loop:
 *
 * - Commits of this process. price_feed has one writer (approved-prices.ts); after each transaction that appended
 *   rows commits, it calls `announceFeed(db, lastSeq)`. Listeners run on a later turn of the event loop
 *   (setImmediate), once for any number of commits announced before it, so the pull goes on to its next request
 *   while the long-polls are answered, and a burst of pages wakes the readers once.
 * - Commits of other processes (a one-shot `pricing-agent pull`, `outbox ack` writes no feed row but would be seen
 *   too; with PostgreSQL, the active node of an HA pair seen from a standby). The backend's change marker
 *   (Dialect.changeMarker: SQLite's `PRAGMA data_version`, which reads the shared WAL index, not a table, and
 *   changes when another connection has committed; PostgreSQL's max(seq) from the primary key) is checked every
 *   `pollMs` (500 ms) while at least one listener is watching, and only when it changed is max(seq) read. So a row
 *   committed by another process reaches a waiting long-poll within about half a second; with nobody waiting
 *   nothing runs.
 *
 * Listeners receive the largest seq known to be committed; they read what is new themselves (a listener may be told
 * about a seq it has already seen, and must not assume every announcement carries new rows for it).
 */
import { sqlOf } from './sql-db.ts';
import type { StateDb } from './state-db.ts';

export type FeedListener = (maxSeq: number) => void;

export interface WatchOptions {
  /** How often commits of other processes are looked for while someone watches. */
  readonly pollMs?: number;
}

const DEFAULT_POLL_MS = 500;

class FeedWatch {
  readonly #db: StateDb;
  readonly #listeners = new Set<FeedListener>();
  #announced = 0;
  #scheduled: NodeJS.Immediate | null = null;
  #timer: NodeJS.Timeout | null = null;
  #marker: unknown = undefined;
  #polling = false;

  constructor(db: StateDb) {
    this.#db = db;
    db.onClose(() => this.#stopPolling());
  }

  add(listener: FeedListener, pollMs: number): () => void {
    this.#listeners.add(listener);
    if (this.#timer === null && !this.#db.closed) {
      this.#marker = undefined; // the first poll takes the marker as it is, and announces nothing
      void this.#poll();
      this.#timer = setInterval(() => void this.#poll(), pollMs);
      this.#timer.unref();
    }
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.#stopPolling();
    };
  }

  announce(seq: number): void {
    if (seq > this.#announced) this.#announced = seq;
    if (this.#scheduled !== null || this.#listeners.size === 0) return;
    this.#scheduled = setImmediate(() => {
      this.#scheduled = null;
      const seqNow = this.#announced;
      for (const listener of [...this.#listeners]) listener(seqNow);
    });
  }

  /** One look for commits of other processes; a failed look (the database away for a moment) is tried next tick. */
  async #poll(): Promise<void> {
    if (this.#db.closed) return this.#stopPolling();
    if (this.#polling) return;
    this.#polling = true;
    try {
      const sql = sqlOf(this.#db);
      const first = this.#marker === undefined;
      const marker = await sql.value(sql.dialect.changeMarker);
      if (marker === this.#marker) return;
      this.#marker = marker;
      if (first) return;
      const max = (await sql.value<number>('SELECT coalesce(max(seq), 0) FROM price_feed')) ?? 0;
      this.announce(max);
    } catch {
      // Nothing to do: the next tick looks again, and a closed database stops the polling.
    } finally {
      this.#polling = false;
    }
  }

  #stopPolling(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }
}

const watches = new WeakMap<StateDb, FeedWatch>();

function watchOf(db: StateDb): FeedWatch {
  let watch = watches.get(db);
  if (!watch) {
    watch = new FeedWatch(db);
    watches.set(db, watch);
  }
  return watch;
}

/**
 * Calls `listener` after feed rows were committed, by this process (announced) or by another one (noticed within
 * `pollMs`). Returns the function that stops watching.
 */
export function watchFeed(db: StateDb, listener: FeedListener, options: WatchOptions = {}): () => void {
  return watchOf(db).add(listener, options.pollMs ?? DEFAULT_POLL_MS);
}

/** Called by the writer of price_feed after a transaction that appended rows up to `seq` committed. */
export function announceFeed(db: StateDb, seq: number): void {
  watches.get(db)?.announce(seq);
}
