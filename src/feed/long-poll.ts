/**
 * Long-polls of `GET /feed/v1/changes?wait=S`: a request that finds no row for its consumer waits here until a row
 * of its stores (or a product-level row) is committed, its wait ends, its token is withdrawn, or the listener closes.
 *
 * Woken by commits, not by a timer: the hub watches the feed (src/store/feed-changes.ts: commits of this process are
 * announced, those of other processes noticed through the backend's change marker) only while somebody waits. On a change
 * it reads the new rows once and hands each waiter the ones of its scope: one query per commit, however many tills
 * wait. (After a jump of more than DISTRIBUTE_MAX rows it reads which stores the rows belong to and lets each
 * concerned waiter read its own page instead, so that memory stays bounded.)
 *
 * Invariant: a waiter is handed the rows of a change only when it has seen the feed up to where the change starts
 * (`seenUpTo`) and found nothing for it there. The hub watches the feed from the moment a request starts reading, so
 * a commit announced while the request reads is not lost; changes are handled one at a time, in order, and a request
 * that registers (or a waiter that rechecks) below what the hub has handled (`#processed`), or below the end of the
 * change it is handing out (`#handling`: that change serves the waiters found when it began), reads again at once,
 * as often as the feed moved meanwhile. So no commit can slip between a request's read and its wait, and the rows a
 * change brings to a waiter are exactly its page.
 *
 * A page says how far it has seen (`upTo`): the seq of its last row when it is full, else the end of what was read
 * (no later row of its scope up to there). A till asks again from there (`next_after`), and while the hub is in step
 * with the feed (below) a request whose `after` is exactly `#processed` waits without reading anything: after each
 * commit the woken tills come back with nothing to read, and cost no query.
 *
 * In step: the feed has been watched without a break since a read that saw up to `#epochFloor`, and `#processed` has
 * reached it. Every commit up to `#processed` has been handed out, every later one is announced (it came after the
 * watch started), so a waiter registered at `#processed` is handed its rows by #process like any other.
 *
 * Waits end on a tick of the hub's own (every TICK_MS, while somebody waits), not on a timer per request: a wait
 * ends up to TICK_MS early, never late, and thousands of waits cost one timer.
 */
import type { Clock } from '../clock.ts';
import { type FeedRow, feedStoresBetween, readFeedRange, readScopedPage } from '../store/price-feed.ts';
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
 * rows: the page (empty when the wait ended without a row) and how far it has seen: no row of the consumer's scope
 * lies between its last row (or `after`) and `upTo`; beyond: `after` is past the feed's last seq (`last`); revoked:
 * the token was withdrawn while waiting (SIGHUP); closing: the listener is shutting down; gone: the client went away.
 */
export type PollOutcome =
  | { readonly kind: 'rows'; readonly rows: FeedRow[]; readonly upTo: number }
  | { readonly kind: 'beyond'; readonly last: number }
  | { readonly kind: 'revoked' }
  | { readonly kind: 'closing' }
  | { readonly kind: 'gone' };

interface Waiter {
  consumer: FeedConsumer;
  readonly after: number;
  readonly limit: number;
  readonly deadline: number;
  /** The feed up to this seq has been read for this waiter (nothing of its scope there). */
  seenUpTo: number;
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
  /** Changes announced, handled one after another (#process). */
  #changes: Promise<void> = Promise.resolve();
  /** The largest seq announced. */
  #announced = 0;
  /** Every change up to this seq has been handed to the waiters that had seen up to its start. */
  #processed = 0;
  /** The end of the change being handed out now (#process), 0 when none: it may miss a waiter registering meanwhile. */
  #handling = 0;
  /** Requests reading their first page: the feed is watched meanwhile. */
  #reading = 0;
  /** The lowest end of a read since the watch started; null: none yet, or not watching (see "In step"). */
  #epochFloor: number | null = null;
  #unwatch: (() => void) | null = null;
  #ticking = false;
  readonly #stop = new AbortController();
  /** Reads in flight (first pages, rechecks, announced changes): what `idle` waits for. */
  readonly #inFlight = new Set<Promise<unknown>>();

  constructor(db: StateDb, clock: Clock, options: LongPollOptions = {}) {
    this.#db = db;
    this.#clock = clock;
    this.#options = options;
  }

  get waiting(): number {
    return this.#waiters.size;
  }

  /**
   * Resolves once no read of the hub is in flight: every first page, recheck and announced change is handled. For
   * tests, which then look at the waits: a PostgreSQL state answers on later turns of the event loop, not at once.
   */
  async idle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  /** `work`, counted in flight until it settles. */
  #track<T>(work: Promise<T>): Promise<T> {
    this.#inFlight.add(work);
    const done = () => void this.#inFlight.delete(work);
    work.then(done, done);
    return work;
  }

  /** The page after `after`, waiting for up to `waitMs` when there is none yet. */
  async poll(request: PollRequest): Promise<PollOutcome> {
    if (request.waitMs > 0 && request.after === this.#processed && this.#inStep() && !this.#stop.signal.aborted && !request.signal.aborted) {
      return this.#wait(request, request.after); // nothing to read: the hub hands it whatever comes next
    }
    let page: Awaited<ReturnType<typeof readScopedPage>>;
    this.#reading += 1;
    this.#watch();
    try {
      page = await this.#track(readScopedPage(this.#db, request.consumer.scope, request.after, request.limit));
    } finally {
      this.#reading -= 1;
      this.#unwatchIfIdle();
    }
    const { rows, upTo } = page;
    if (this.#unwatch !== null && (this.#epochFloor === null || upTo < this.#epochFloor)) this.#epochFloor = upTo;
    // Nobody waits: changes up to what was just read need not be handed out (a request registering below reads again).
    if (this.#waiters.size === 0 && upTo > this.#processed && this.#announced <= upTo) this.#processed = upTo;
    if (request.after > upTo) return { kind: 'beyond', last: upTo };
    if (rows.length > 0 || request.waitMs <= 0) return { kind: 'rows', rows, upTo: seenUpTo(rows, request.limit, upTo, request.after) };
    if (this.#stop.signal.aborted) return { kind: 'closing' };
    if (request.signal.aborted) return { kind: 'gone' };
    return this.#wait(request, upTo);
  }

  /** True when the hub is in step with the feed (see the header): a waiter at `#processed` needs no read. */
  #inStep(): boolean {
    return this.#unwatch !== null && this.#epochFloor !== null && this.#processed >= this.#epochFloor;
  }

  /** Registers the request as a waiter that has seen the feed up to `upTo` and found nothing for it after `after`. */
  #wait(request: PollRequest, upTo: number): Promise<PollOutcome> {
    return new Promise((resolve) => {
      const onGone = () => waiter.settle({ kind: 'gone' });
      const waiter: Waiter = {
        consumer: request.consumer,
        after: request.after,
        limit: request.limit,
        deadline: this.#clock.now() + request.waitMs,
        seenUpTo: upTo,
        settle: (outcome) => {
          if (!this.#waiters.has(waiter)) return;
          this.#remove(waiter);
          request.signal.removeEventListener('abort', onGone);
          resolve(outcome);
        },
      };
      request.signal.addEventListener('abort', onGone, { once: true });
      this.#add(waiter);
      // The hub may have moved past what this request read (a change handled meanwhile), or be handing out a change
      // it has not seen, to the waiters it found when it began: read again now.
      if (upTo < Math.max(this.#processed, this.#handling)) void this.#track(this.#recheck(waiter));
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
      void this.#track(this.#recheck(waiter));
    }
  }

  /** Ends every wait (the listener is closing); no new wait starts. */
  close(): void {
    this.#stop.abort(new Error('the feed is closing'));
    for (const waiter of [...this.#waiters]) waiter.settle({ kind: 'closing' });
  }

  /** Starts watching the feed, if it is not watched yet. */
  #watch(): void {
    this.#unwatch ??= watchFeed(this.#db, (seq) => this.#changed(seq), { pollMs: this.#options.crossProcessPollMs });
  }

  #unwatchIfIdle(): void {
    if (this.#waiters.size > 0 || this.#reading > 0) return;
    this.#unwatch?.();
    this.#unwatch = null;
    this.#epochFloor = null; // commits from now on are not announced to the hub
  }

  #add(waiter: Waiter): void {
    this.#watch();
    this.#waiters.add(waiter);
    this.#index(waiter);
    this.#options.onWaiting?.(this.#waiters.size);
    if (!this.#ticking) void this.#tick();
  }

  #remove(waiter: Waiter): void {
    this.#waiters.delete(waiter);
    this.#unindex(waiter);
    this.#options.onWaiting?.(this.#waiters.size);
    this.#unwatchIfIdle();
  }

  /** Answers the waits that reached their end (up to one tick early), until nobody waits. */
  async #tick(): Promise<void> {
    this.#ticking = true;
    try {
      while (this.#waiters.size > 0) {
        await this.#clock.sleep(TICK_MS, this.#stop.signal);
        const soon = this.#clock.now() + TICK_MS;
        for (const waiter of [...this.#waiters]) if (waiter.deadline <= soon) waiter.settle({ kind: 'rows', rows: [], upTo: waiter.after });
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

  /** A commit up to `seq` was announced: handled after the changes before it, one at a time, in order. */
  #changed(seq: number): void {
    if (seq > this.#announced) this.#announced = seq;
    this.#changes = this.#track(this.#changes.then(() => this.#process(seq)));
  }

  /**
   * Rows in (`#processed`, `seq`] are committed: hand them to the waiters of the stores they belong to. Only a waiter
   * that has seen the feed up to where the change starts gets them, and only the rows after what it has seen; any
   * other is reading its own page (poll, #recheck), and reads again when that ends below `#processed`.
   */
  async #process(seq: number): Promise<void> {
    const from = this.#processed;
    if (seq <= from) return;
    const eligible = [...this.#waiters].filter((w) => w.seenUpTo >= from);
    this.#handling = seq;
    try {
      if (eligible.length === 0) return;
      if (seq - from > (this.#options.distributeMax ?? DISTRIBUTE_MAX)) await this.#recheckConcerned(from, seq, new Set(eligible));
      else this.#distribute(await readFeedRange(this.#db, from, seq), eligible, seq);
    } catch {
      // The read failed (the database away for a moment): the waits end at their deadline with what they have.
    } finally {
      if (seq > this.#processed) this.#processed = seq;
      this.#handling = 0;
    }
  }

  #distribute(all: readonly FeedRow[], eligible: readonly Waiter[], seq: number): void {
    const byStore = new Map<string, FeedRow[]>();
    const productLevel: FeedRow[] = [];
    for (const row of all) {
      if (row.store_id === null) productLevel.push(row);
      else {
        let list = byStore.get(row.store_id);
        if (!list) byStore.set(row.store_id, (list = []));
        list.push(row);
      }
    }
    for (const waiter of eligible) {
      if (!this.#waiters.has(waiter)) continue;
      const { scope } = waiter.consumer;
      let rows: FeedRow[];
      if (scope === '*') rows = [...all];
      else if (scope.length === 1) rows = merge(productLevel, byStore.get(scope[0] ?? '') ?? []);
      else rows = scope.reduce((acc: FeedRow[], store) => merge(acc, byStore.get(store) ?? []), productLevel);
      const seen = waiter.seenUpTo;
      if (rows.length > 0 && (rows[0]?.seq ?? 0) <= seen) rows = rows.filter((r) => r.seq > seen);
      waiter.seenUpTo = Math.max(seen, seq);
      if (rows.length > waiter.limit) rows = rows.slice(0, waiter.limit);
      if (rows.length > 0) waiter.settle({ kind: 'rows', rows, upTo: seenUpTo(rows, waiter.limit, waiter.seenUpTo, waiter.after) });
    }
  }

  /** After a large jump: which stores the rows belong to, and each concerned waiter reads its own page. */
  async #recheckConcerned(from: number, seq: number, eligible: ReadonlySet<Waiter>): Promise<void> {
    const stores = await feedStoresBetween(this.#db, from, seq);
    const concerned = stores.includes(null) ? new Set(this.#waiters) : new Set(this.#everyStore);
    for (const store of stores) for (const waiter of this.#byStore.get(store ?? '') ?? []) concerned.add(waiter);
    for (const waiter of eligible) if (!concerned.has(waiter) && waiter.seenUpTo < seq) waiter.seenUpTo = seq; // nothing of theirs
    await Promise.all([...concerned].filter((w) => eligible.has(w)).map((waiter) => this.#recheck(waiter)));
  }

  /**
   * The waiter's own page, read now; answers it when there are rows, else records how far it has seen, and reads
   * again while the hub has processed further meanwhile. A failed read leaves it waiting (until its deadline).
   */
  async #recheck(waiter: Waiter): Promise<void> {
    try {
      while (this.#waiters.has(waiter)) {
        const { rows, upTo } = await readScopedPage(this.#db, waiter.consumer.scope, waiter.after, waiter.limit);
        if (rows.length > 0) return waiter.settle({ kind: 'rows', rows, upTo: seenUpTo(rows, waiter.limit, upTo, waiter.after) });
        if (upTo > waiter.seenUpTo) waiter.seenUpTo = upTo;
        if (waiter.seenUpTo >= this.#processed) return;
      }
    } catch {
      // the wait ends at its deadline
    }
  }
}

/**
 * How far a page has seen: the seq of its last row when it is full (more rows may follow), else the end of what was
 * read for it (`readUpTo`: no later row of its scope up to there); `after` for an empty page.
 */
function seenUpTo(rows: readonly FeedRow[], limit: number, readUpTo: number, after: number): number {
  const last = rows.at(-1)?.seq;
  if (last === undefined) return after;
  return rows.length >= limit ? last : Math.max(last, readUpTo);
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
