/**
 * Long-polls of `GET /feed/v1/changes?wait=S`: a request that finds no row for its consumer waits here until a row
 * of its stores (or a product-level row) is committed, its wait ends, its token is withdrawn, or the listener closes.
 *
 * Woken by commits, not by a timer: the hub watches the feed (src/store/feed-changes.ts: commits of this process are
 * announced, those of other processes noticed through SQLite's data_version) only while somebody waits. On a change
 * it reads which stores the new rows belong to, once, and re-reads the page of the waiters of those stores only; a
 * product-level row concerns every waiter.
 *
 * Invariant: every waiter has seen the feed up to `#lastSeen` (the rows after its `after` up to there hold nothing for
 * it). A request reads its first page and the feed's last seq in one snapshot; if the hub has already moved past
 * that seq when it registers, it reads again at once. So no commit can slip between a request's read and its wait.
 */
import type { Clock } from '../clock.ts';
import { type FeedRow, maxSeq, readScopedFeed } from '../outbox/price-feed.ts';
import { watchFeed } from '../store/feed-changes.ts';
import type { StateDb } from '../store/state-db.ts';
import type { ConsumerDirectory, FeedConsumer } from './consumers.ts';

export interface PollRequest {
  readonly consumer: FeedConsumer;
  readonly after: number;
  readonly limit: number;
  /** 0: answer at once. */
  readonly waitMs: number;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
}

/**
 * rows: the page (empty when the wait ended without a row); revoked: the token was withdrawn while waiting (SIGHUP);
 * closing: the listener is shutting down; gone: the client went away.
 */
export type PollOutcome =
  | { readonly kind: 'rows'; readonly rows: FeedRow[] }
  | { readonly kind: 'revoked' }
  | { readonly kind: 'closing' }
  | { readonly kind: 'gone' };

interface Waiter {
  consumer: FeedConsumer;
  readonly after: number;
  readonly limit: number;
  readonly stop: AbortController;
  readonly settle: (outcome: PollOutcome) => void;
}

export interface LongPollOptions {
  /** How often commits of other processes are looked for while somebody waits (store/feed-changes.ts). */
  readonly crossProcessPollMs?: number;
  /** After the number of waiting requests changed (metrics). */
  readonly onWaiting?: (count: number) => void;
}

export class LongPollHub {
  readonly #db: StateDb;
  readonly #clock: Clock;
  readonly #options: LongPollOptions;
  readonly #waiters = new Set<Waiter>();
  readonly #byStore = new Map<string, Set<Waiter>>();
  /** Waiters of '*' consumers: concerned by every row. */
  readonly #everyStore = new Set<Waiter>();
  #lastSeen = 0;
  #unwatch: (() => void) | null = null;
  #closed = false;

  constructor(db: StateDb, clock: Clock, options: LongPollOptions = {}) {
    this.#db = db;
    this.#clock = clock;
    this.#options = options;
  }

  get waiting(): number {
    return this.#waiters.size;
  }

  /** The page after `after`, waiting for up to `waitMs` when there is none yet. */
  poll(request: PollRequest): Promise<PollOutcome> {
    const { rows, seenUpTo } = this.#db.read(() => ({
      rows: readScopedFeed(this.#db, request.consumer.scope, request.after, request.limit),
      seenUpTo: maxSeq(this.#db),
    }));
    if (rows.length > 0 || request.waitMs <= 0) return Promise.resolve({ kind: 'rows', rows });
    if (this.#closed) return Promise.resolve({ kind: 'closing' });
    if (request.signal.aborted) return Promise.resolve({ kind: 'gone' });
    return new Promise((resolve) => {
      const stop = new AbortController();
      const waiter: Waiter = {
        consumer: request.consumer,
        after: request.after,
        limit: request.limit,
        stop,
        settle: (outcome) => {
          if (!this.#waiters.has(waiter)) return;
          this.#remove(waiter);
          stop.abort();
          request.signal.removeEventListener('abort', onGone);
          resolve(outcome);
        },
      };
      const onGone = () => waiter.settle({ kind: 'gone' });
      request.signal.addEventListener('abort', onGone, { once: true });
      this.#add(waiter, seenUpTo);
      this.#clock.sleep(request.waitMs, stop.signal).then(
        () => waiter.settle({ kind: 'rows', rows: [] }),
        () => undefined, // stopped: settled already
      );
      // The hub may have moved past what this request read (another waiter's change): read again now.
      if (seenUpTo < this.#lastSeen) this.#recheck(waiter);
    });
  }

  /**
   * After a reload: each waiter is looked up again by its token. A token no longer configured ends its waits at once
   * (revoked); a consumer whose stores changed waits on with its new scope.
   */
  reauthorize(directory: ConsumerDirectory): void {
    for (const waiter of [...this.#waiters]) {
      const consumer = directory.byDigest(waiter.consumer.digest);
      if (consumer === null) {
        waiter.settle({ kind: 'revoked' });
        continue;
      }
      this.#unindex(waiter);
      waiter.consumer = consumer;
      this.#index(waiter);
      this.#recheck(waiter);
    }
  }

  /** Ends every wait (the listener is closing); no new wait starts. */
  close(): void {
    this.#closed = true;
    for (const waiter of [...this.#waiters]) waiter.settle({ kind: 'closing' });
  }

  #add(waiter: Waiter, seenUpTo: number): void {
    if (this.#waiters.size === 0) {
      this.#lastSeen = seenUpTo;
      this.#unwatch = watchFeed(this.#db, (seq) => this.#changed(seq), { pollMs: this.#options.crossProcessPollMs });
    }
    this.#waiters.add(waiter);
    this.#index(waiter);
    this.#options.onWaiting?.(this.#waiters.size);
  }

  #remove(waiter: Waiter): void {
    this.#waiters.delete(waiter);
    this.#unindex(waiter);
    this.#options.onWaiting?.(this.#waiters.size);
    if (this.#waiters.size === 0) {
      this.#unwatch?.();
      this.#unwatch = null;
    }
  }

  #index(waiter: Waiter): void {
    const { scope } = waiter.consumer;
    if (scope === '*') {
      this.#everyStore.add(waiter);
      return;
    }
    for (const store of scope) {
      let set = this.#byStore.get(store);
      if (!set) this.#byStore.set(store, (set = new Set()));
      set.add(waiter);
    }
  }

  #unindex(waiter: Waiter): void {
    const { scope } = waiter.consumer;
    if (scope === '*') {
      this.#everyStore.delete(waiter);
      return;
    }
    for (const store of scope) {
      const set = this.#byStore.get(store);
      set?.delete(waiter);
      if (set?.size === 0) this.#byStore.delete(store);
    }
  }

  /** Rows up to `seq` are committed: wake the waiters of the stores they belong to. */
  #changed(seq: number): void {
    if (seq <= this.#lastSeen || this.#waiters.size === 0) return;
    const stores = this.#db
      .statement<string | null>('SELECT DISTINCT store_id FROM price_feed WHERE seq > ? AND seq <= ?')
      .pluck()
      .all(this.#lastSeen, seq);
    this.#lastSeen = seq;
    let concerned: Iterable<Waiter>;
    if (stores.includes(null)) {
      concerned = [...this.#waiters]; // a product-level row is for every consumer
    } else {
      const set = new Set(this.#everyStore);
      for (const store of stores) for (const waiter of this.#byStore.get(store as string) ?? []) set.add(waiter);
      concerned = set;
    }
    for (const waiter of concerned) this.#recheck(waiter);
  }

  #recheck(waiter: Waiter): void {
    const rows = readScopedFeed(this.#db, waiter.consumer.scope, waiter.after, waiter.limit);
    if (rows.length > 0) waiter.settle({ kind: 'rows', rows });
  }
}
