/**
 * The handle on the agent's state database: one better-sqlite3 connection, a Kysely instance over the same
 * connection, cached prepared statements and the transaction rule.
 *
 * Transaction rule: every write that must be atomic runs synchronously inside `write(fn)` (one IMMEDIATE
 * transaction; the write lock is taken up front, so a second process waits on busy_timeout instead of failing on
 * a lock upgrade). `fn` is synchronous, so nothing can await HTTP inside a transaction, and no other code can run
 * on this connection between its statements. Kysely is for reads and for the migrations; never open a Kysely
 * transaction on this connection outside the migrator: between its awaits, a `write()` would join it.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { StoreError } from './errors.ts';
import type { Database } from './schema.ts';
import { truncateWalIfFree } from './wal-maintenance.ts';

export type Statement<R> = BetterSqlite3.Statement<unknown[], R>;

export class StateDb {
  readonly path: string;
  readonly readonly: boolean;
  readonly sqlite: BetterSqlite3.Database;
  readonly kysely: Kysely<Database>;
  readonly #clock: () => number;
  readonly #statements = new Map<string, Statement<unknown>>();
  readonly #closeHooks = new Set<() => void>();
  #closed = false;

  constructor(init: {
    path: string;
    readonly: boolean;
    sqlite: BetterSqlite3.Database;
    kysely: Kysely<Database>;
    now: () => number;
  }) {
    this.path = init.path;
    this.readonly = init.readonly;
    this.sqlite = init.sqlite;
    this.kysely = init.kysely;
    this.#clock = init.now;
  }

  /** The injected clock as an ISO 8601 UTC timestamp (the format of every *_at column the agent writes). */
  now(): string {
    return new Date(this.#clock()).toISOString();
  }

  /**
   * A prepared statement, compiled once per connection. `R` is the caller's statement of the row shape the SQL
   * selects (checked by the tests, not by the compiler). Modes set with `pluck()`/`raw()` stick to the cached
   * statement: use one mode per SQL text.
   */
  statement<R = unknown>(sql: string): Statement<R> {
    let stmt = this.#statements.get(sql);
    if (!stmt) {
      stmt = this.sqlite.prepare<unknown[], unknown>(sql);
      this.#statements.set(sql, stmt);
    }
    return stmt as Statement<R>;
  }

  /**
   * Runs `fn` in one IMMEDIATE transaction: all of it commits (durably: synchronous=FULL) or none of it does.
   * If the process dies inside `fn`, SQLite rolls the transaction back on the next open.
   *
   * `durability: 'relaxed'` commits at synchronous=NORMAL: safe against a crash of the process (WAL), but a power
   * cut may lose the last such commits (the next FULL commit makes them durable too). Only for checkpoints whose
   * loss costs repeated work, never data: a push batch checkpoint (the batch is sent again, idempotently). Never for
   * anything acknowledged to the API or read by a POS.
   */
  write<T>(fn: () => T, options: { durability?: 'full' | 'relaxed' } = {}): T {
    if (this.readonly) throw new StoreError('READ_ONLY', `${this.path} is open read-only`);
    if (this.sqlite.inTransaction) {
      const message = 'a transaction is already open on this connection (a Kysely transaction?)';
      throw new StoreError('TRANSACTION_OPEN', message);
    }
    if (options.durability !== 'relaxed') return this.sqlite.transaction(fn).immediate();
    // Synchronous code from here to the restore: no other write can run on this connection in between. Prepared
    // once (the statement cache): `pragma()` compiles its statement on every call, twice per push batch.
    this.statement('PRAGMA synchronous = NORMAL').run();
    try {
      return this.sqlite.transaction(fn).immediate();
    } finally {
      this.statement('PRAGMA synchronous = FULL').run();
    }
  }

  /**
   * Runs `fn` (reads only) in one read transaction: every statement in it sees the same snapshot, even while another
   * process commits. For reads of several statements that must agree with each other (a page of the feed merged
   * from per-store reads, a snapshot and the seq it reflects).
   */
  read<T>(fn: () => T): T {
    if (this.sqlite.inTransaction) return fn();
    return this.sqlite.transaction(fn).deferred();
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Registers `hook` to run (once) when the database is closed, e.g. to stop a timer. */
  onClose(hook: () => void): () => void {
    this.#closeHooks.add(hook);
    return () => this.#closeHooks.delete(hook);
  }

  /**
   * Stops the hooks, checkpoints the WAL into the main file and truncates it when no reader holds it (without
   * waiting for readers), then closes the connection. Everything committed is in the database file or the WAL
   * either way; a WAL left behind is replayed by the next open.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const hook of this.#closeHooks) hook();
    this.#closeHooks.clear();
    try {
      if (!this.readonly && this.sqlite.open) truncateWalIfFree(this);
    } finally {
      this.#statements.clear();
      await this.kysely.destroy();
      if (this.sqlite.open) this.sqlite.close();
    }
  }
}
