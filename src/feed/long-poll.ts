/**
 * Long-polls of `GET /feed/v1/changes?wait=S`: a request that finds no row for its consumer waits here until a row
 * of its stores (or a product-level row) is committed, its wait ends, its token is withdrawn, or the listener closes.
 *
 * Woken by commits, not by a timer: the hub watches the feed (src/store/feed-changes.ts: commits of this process are
 * announced, those of other processes noticed through SQLite's data_version) only while somebody waits. On a change
 * it reads the new rows once and hands each waiter the ones of its scope: one query per commit, however many tills
 * wait. (After a jump of more than DISTRIBUTE_MAX rows it reads which stores the rows belong to and lets each
 * concerned waiter read its own page instead, so that memory stays bounded.)
 *
 * Invariant: every waiter has seen the feed up to `#lastSeen` (or further) and found nothing for it after its `after`.
 * A request reads its first page bounded by the feed's last seq (readScopedPage); if the hub has already moved past
 * that seq when the request registers, it reads again at once. So no commit can slip between a request's read and its
 * wait, and the rows of its scope that a change brings after its `after` are exactly its page. (A request can have
 * read further than `#lastSeen`: one that arrives between a commit and its announcement. Hence "after its `after`".)
 *
 * Waits end on a tick of the hub's own (every TICK_MS, while somebody waits), not on a timer per request: a wait
 * ends up to TICK_MS early, never late, and thousands of waits cost one timer.
 */
import type { Clock } from '../clock.ts';
import { type FeedRow, readFeedRange, readScopedPage } from '../outbox/price-feed.ts';
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
 * rows: the page (empty when the wait ended without a row); beyond: `after` is past the feed's last seq (`last`);
 * revoked: the token was withdrawn while waiting (SIGHUP); closing: the listener is shutting down; gone: the client
 * went away.
 */
export type PollOutcome =
  | { readonly kind: 'rows'; readonly rows: FeedRow[] }
  | { readonly kind: 'beyond'; readonly last: number }
  | { readonly kind: 'revoked' }
  | { readonly kind: 'closing' }
  | { readonly kind: 'gone' };

interface Waiter {
  consumer: FeedConsumer;
  readonly after: number;
  readonly limit: number;
  readonly deadline: number;
  readonly settle: (outcome: PollOutcome) => void;
}

export interface LongPollOptions {
  /** How often commits of other processes are looked for while somebody waits (store/feed-changes.ts). */
  readonly crossProcessPollMs?: number;
  /** After the number of waiting requests changed (metrics). */
  readonly onWaiting?: (count: number) => void;
  /** Up to this many new rows are read at once and handed out (tests lower it to reach the other path). */
  readonly distributeMax?: number;
}

/** How often waits that reached their end are answered. */
const TICK_MS = 250;
/** Up to this many new rows are read at once and handed out; beyond, each concerned waiter reads its own page. */
const DISTRIBUTE_MAX = 10_000;

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
  #ticking = false;
  readonly #stop = new AbortController();

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
    const { rows, upTo } = readScopedPage(this.#db, request.consumer.scope, request.after, request.limit);
    if (request.after > upTo) return Promise.resolve({ kind: 'beyond', last: upTo });
    if (rows.length > 0 || request.waitMs <= 0) return Promise.resolve({ kind: 'rows', rows });
    if (this.#stop.signal.aborted) return Promise.resolve({ kind: 'closing' });
    if (request.signal.aborted) return Promise.resolve({ kind: 'gone' });
    return new Promise((resolve) => {
      const onGone = () => waiter.settle({ kind: 'gone' });
      const waiter: Waiter = {
        consumer: request.consumer,
        after: request.after,
        limit: request.limit,
        deadline: this.#clock.now() + request.waitMs,
        settle: (outcome) => {
          if (!this.#waiters.has(waiter)) return;
          this.#remove(waiter);
          request.signal.removeEventListener('abort', onGone);
          resolve(outcome);
        },
      };
      request.signal.addEventListener('abort', onGone, { once: true });
      this.#add(waiter, upTo);
      // The hub may have moved past what this request read (a change announced meanwhile): read again now.
      if (upTo < this.#lastSeen) this.#recheck(waiter);
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
    this.#stop.abort(new Error('the feed is closing'));
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
    if (!this.#ticking) void this.#tick();
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

  /** Answers the waits that reached their end (up to one tick early), until nobody waits. */
  async #tick(): Promise<void> {
    this.#ticking = true;
    try {
      while (this.#waiters.size > 0) {
        await this.#clock.sleep(TICK_MS, this.#stop.signal);
        const soon = this.#clock.now() + TICK_MS;
        for (const waiter of [...this.#waiters]) if (waiter.deadline <= soon) waiter.settle({ kind: 'rows', rows: [] });
      }
    } catch {
      // closing: every waiter is answered by close()
    } finally {
      this.#ticking = false;
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

  /** Rows up to `seq` are committed: hand them to the waiters of the stores they belong to. */
  #changed(seq: number): void {
    if (seq <= this.#lastSeen || this.#waiters.size === 0) return;
    const from = this.#lastSeen;
    this.#lastSeen = seq;
    if (seq - from > (this.#options.distributeMax ?? DISTRIBUTE_MAX)) return this.#recheckConcerned(from, seq);
    const byStore = new Map<string, FeedRow[]>();
    const productLevel: FeedRow[] = [];
    const all = readFeedRange(this.#db, from, seq);
    for (const row of all) {
      if (row.store_id === null) productLevel.push(row);
      else {
        let list = byStore.get(row.store_id);
        if (!list) byStore.set(row.store_id, (list = []));
        list.push(row);
      }
    }
    const concerned = productLevel.length > 0 ? new Set(this.#waiters) : new Set(this.#everyStore);
    if (productLevel.length === 0) for (const store of byStore.keys()) for (const w of this.#byStore.get(store) ?? []) concerned.add(w);
    for (const waiter of concerned) {
      const { scope } = waiter.consumer;
      let rows: FeedRow[];
      if (scope === '*') rows = all;
      else if (scope.length === 1) rows = merge(productLevel, byStore.get(scope[0] ?? '') ?? []);
      else rows = scope.reduce((acc: FeedRow[], store) => merge(acc, byStore.get(store) ?? []), productLevel);
      // A request that arrived after this commit and before its announcement read past `from` already: the rows up to
      // its `after` are not for it (it has them, or they are not in its scope).
      const first = rows.findIndex((row) => row.seq > waiter.after);
      if (first === -1) continue;
      const page = rows.slice(first, first + waiter.limit);
      waiter.settle({ kind: 'rows', rows: page });
    }
  }

  /** After a large jump: which stores the rows belong to, and each concerned waiter reads its own page. */
  #recheckConcerned(from: number, seq: number): void {
    const stores = this.#db
      .statement<string | null>('SELECT DISTINCT store_id FROM price_feed WHERE seq > ? AND seq <= ?')
      .pluck()
      .all(from, seq);
    const concerned = stores.includes(null) ? new Set(this.#waiters) : new Set(this.#everyStore);
    for (const store of stores) for (const waiter of this.#byStore.get(store ?? '') ?? []) concerned.add(waiter);
    for (const waiter of concerned) this.#recheck(waiter);
  }

  #recheck(waiter: Waiter): void {
    const { rows } = readScopedPage(this.#db, waiter.consumer.scope, waiter.after, waiter.limit);
    if (rows.length > 0) waiter.settle({ kind: 'rows', rows });
  }
}

/** Two lists of rows in seq order, as one. */
function merge(a: readonly FeedRow[], b: readonly FeedRow[]): FeedRow[] {
  if (a.length === 0) return b as FeedRow[];
  if (b.length === 0) return a as FeedRow[];
  const out: FeedRow[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = a[i];
    const y = b[j];
    if (y === undefined || (x !== undefined && x.seq < y.seq)) {
      out.push(x as FeedRow);
      i += 1;
    } else {
      out.push(y);
      j += 1;
    }
  }
  return out;
}
