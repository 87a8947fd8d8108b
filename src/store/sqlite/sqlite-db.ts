/**
 * The SQLite backend: one better-sqlite3 connection, cached prepared statements, transactions one after another.
 *
 * better-sqlite3 is synchronous: every statement runs to completion when called, so the promises of this class are
 * already settled when returned, and the event loop never sees a statement half done. A transaction's `fn` awaits
 * only its own statements (the transaction rule of sql-db.ts), but other code's continuations can still run between
 * those awaits: while a transaction is open, every other call on the connection waits for it (`#active`), so no
 * read sees uncommitted rows and no write joins a transaction that is not its own.
 *
 * Transactions are IMMEDIATE: the write lock is taken up front, so a second process (a CLI command) waits on
 * busy_timeout instead of failing on a lock upgrade. If the process dies inside one, SQLite rolls it back on the
 * next open.
 *
 * Relaxed commits (WriteOptions.durability: a push's batch checkpoints, acknowledgement marks) neither sync the WAL
 * (synchronous=NORMAL) nor checkpoint it below the WAL's size limit (journal_size_limit): SQLite's automatic
 * checkpoint at 1,000 pages ran after nearly every batch commit of a delta push, since remembering a batch's 1,000
 * random keys dirties about as many pages, and copying and syncing them cost 25-45 ms a commit against 7 ms for the
 * commit itself (docs/performance.md). The next full commit (a file's finish), the WAL maintenance or the bound
 * checkpoints them all at once, each page once. Nothing more can be lost than before: an unsynced commit survives a
 * crash of the process (its frames are in the operating system's cache), and a power cut loses the last relaxed
 * commits whole, in order, which the relaxed contract allows (sql-db.ts WriteOptions).
 */
import type BetterSqlite3 from 'better-sqlite3';
import { sqliteDialect } from '../dialect.ts';
import { insertStatement, SqlDb, type InsertSpec, type Queryable, type SqlParams, type Tx, type WriteOptions } from '../sql-db.ts';
import type { MaintenanceOptions } from '../state-db.ts';
import { truncateWalIfFree, WalMaintenance } from './wal-maintenance.ts';

type Statement = BetterSqlite3.Statement<unknown[], unknown>;

/** SQLite's automatic checkpoint: once a commit leaves this many pages in the WAL (its default). */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;
const FULL_AUTOCHECKPOINT = `PRAGMA wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`;

export class SqliteDb extends SqlDb {
  readonly dialect = sqliteDialect;
  readonly path: string;
  readonly sqlite: BetterSqlite3.Database;
  readonly #statements = new Map<string, Statement>();
  readonly #pluck = new Map<string, Statement>();
  /** Settles when the transaction in flight ends; null when none is. */
  #active: Promise<void> | null = null;
  #maintenance: WalMaintenance | null = null;
  /** Relaxed commits checkpoint the WAL from this size on (or from SQLite's default, if more). */
  readonly #relaxedCheckpointBytes: number;
  /** The pragma that sets it, made at the first relaxed commit (it needs the page size). */
  #relaxedCheckpoint: string | null = null;

  constructor(init: { path: string; readonly: boolean; sqlite: BetterSqlite3.Database; now: () => number; relaxedCheckpointBytes?: number }) {
    super({ location: init.path, localFile: init.path, readonly: init.readonly, now: init.now });
    this.path = init.path;
    this.sqlite = init.sqlite;
    this.#relaxedCheckpointBytes = init.relaxedCheckpointBytes ?? 0;
  }

  #relaxedCheckpointPragma(): string {
    if (this.#relaxedCheckpoint === null) {
      const pageSize = this.sqlite.pragma('page_size', { simple: true }) as number;
      const pages = Math.max(DEFAULT_AUTOCHECKPOINT_PAGES, Math.floor(this.#relaxedCheckpointBytes / pageSize));
      this.#relaxedCheckpoint = `PRAGMA wal_autocheckpoint = ${pages}`;
    }
    return this.#relaxedCheckpoint;
  }

  /** A prepared statement, compiled once per connection. */
  statement(sql: string): Statement {
    let stmt = this.#statements.get(sql);
    if (!stmt) {
      stmt = this.sqlite.prepare<unknown[], unknown>(sql);
      this.#statements.set(sql, stmt);
    }
    return stmt;
  }

  #plucked(sql: string): Statement {
    let stmt = this.#pluck.get(sql);
    if (!stmt) {
      stmt = this.sqlite.prepare<unknown[], unknown>(sql).pluck();
      this.#pluck.set(sql, stmt);
    }
    return stmt;
  }

  async all<R>(sql: string, params: SqlParams = []): Promise<R[]> {
    if (this.#active) await this.#idle();
    return this.statement(sql).all(...params) as R[];
  }

  async get<R>(sql: string, params: SqlParams = []): Promise<R | undefined> {
    if (this.#active) await this.#idle();
    return this.statement(sql).get(...params) as R | undefined;
  }

  async value<V>(sql: string, params: SqlParams = []): Promise<V | undefined> {
    if (this.#active) await this.#idle();
    return this.#plucked(sql).get(...params) as V | undefined;
  }

  async run(sql: string, params: SqlParams = []): Promise<number> {
    if (this.#active) await this.#idle();
    return this.statement(sql).run(...params).changes;
  }

  async insert<R = never>(spec: InsertSpec, rows: readonly SqlParams[]): Promise<R[]> {
    if (this.#active) await this.#idle();
    return this.#insertRows<R>(spec, rows);
  }

  #insertRows<R>(spec: InsertSpec, rows: readonly SqlParams[]): R[] {
    const stmt = this.statement(insertStatement(spec, `VALUES (${spec.columns.map(() => '?').join(', ')})`));
    const out: R[] = [];
    if (spec.returning && spec.returning.length > 0) {
      for (const row of rows) {
        const returned = stmt.get(...row) as R | undefined;
        if (returned !== undefined) out.push(returned);
      }
    } else {
      for (const row of rows) stmt.run(...row);
    }
    return out;
  }

  /** Waits until no transaction is in flight; refuses to wait for the caller's own. */
  async #idle(): Promise<void> {
    this.refuseInsideTransaction();
    while (this.#active) await this.#active;
  }

  protected async snapshot<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    return this.#exclusive('BEGIN', fn, false);
  }

  async *batches<R>(sql: string, params: SqlParams, size: number): AsyncGenerator<R[]> {
    // The statement stays open between batches: the connection is held (`#active`) until the generator ends, as
    // any other statement would fail with "This database connection is busy executing a query".
    await this.#idle();
    let release!: () => void;
    this.#active = new Promise<void>((resolve) => (release = resolve));
    this.statement('BEGIN').run(); // one snapshot for the whole read
    try {
      let batch: R[] = [];
      // Integers are read as bigints and given back exactly (exactIntegers): a delta key's 64-bit hash read as a
      // number lost its low digits, and the copy stored other keys than the agent had remembered.
      for (const row of this.sqlite.prepare<unknown[], Record<string, unknown>>(sql).safeIntegers(true).iterate(...params)) {
        batch.push(exactIntegers(row) as R);
        if (batch.length >= size) {
          yield batch;
          batch = [];
        }
      }
      if (batch.length > 0) yield batch;
    } finally {
      if (this.sqlite.inTransaction) this.statement('COMMIT').run();
      this.#active = null;
      release();
    }
  }

  protected async transaction<T>(fn: (tx: Tx) => Promise<T>, options: WriteOptions): Promise<T> {
    return this.#exclusive('BEGIN IMMEDIATE', fn, options.durability === 'relaxed');
  }

  /**
   * Holds the connection for one transaction (`begin`: deferred for a snapshot read, IMMEDIATE for a write) and runs
   * `fn` on it: commit when it resolves, rollback when it throws.
   */
  async #exclusive<T>(begin: string, fn: (tx: Tx) => Promise<T>, relaxed: boolean): Promise<T> {
    while (this.#active) await this.#active;
    let release!: () => void;
    this.#active = new Promise<void>((resolve) => (release = resolve));
    let open = true;
    /** Runs a statement of this transaction now; a settled promise (a throw becomes a rejection). */
    const settled = <T>(statement: () => T): Promise<T> => {
      try {
        if (!open) throw new Error('transaction used after it ended');
        return Promise.resolve(statement());
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
    };
    const tx: Tx = {
      dialect: this.dialect,
      now: this.now(),
      all: <R>(sql: string, params: SqlParams = []) => settled(() => this.statement(sql).all(...params) as R[]),
      get: <R>(sql: string, params: SqlParams = []) => settled(() => this.statement(sql).get(...params) as R | undefined),
      value: <V>(sql: string, params: SqlParams = []) => settled(() => this.#plucked(sql).get(...params) as V | undefined),
      run: (sql: string, params: SqlParams = []) => settled(() => this.statement(sql).run(...params).changes),
      insert: <R>(spec: InsertSpec, rows: readonly SqlParams[]) => settled(() => this.#insertRows<R>(spec, rows)),
      commitBehind: (last) => last, // every statement has run already: COMMIT follows when `fn` returns
    };
    try {
      // Prepared once (the statement cache): pragma() compiles its statement on every call. The checkpoint threshold
      // is read when the commit ends (SQLite's WAL hook).
      if (relaxed) {
        this.statement('PRAGMA synchronous = NORMAL').run();
        this.statement(this.#relaxedCheckpointPragma()).get();
      }
      this.statement(begin).run();
      try {
        const result = await fn(tx);
        this.statement('COMMIT').run();
        return result;
      } catch (error) {
        // SQLite may have rolled back already (SQLITE_FULL, I/O errors): only an open transaction is rolled back.
        if (this.sqlite.inTransaction) this.statement('ROLLBACK').run();
        throw error;
      }
    } finally {
      open = false;
      try {
        if (relaxed) {
          this.statement('PRAGMA synchronous = FULL').run();
          this.statement(FULL_AUTOCHECKPOINT).get();
        }
      } finally {
        this.#active = null;
        release();
      }
    }
  }

  override startMaintenance(options: MaintenanceOptions = {}): void {
    if (this.#maintenance || this.readonly || this.closed) return;
    this.#maintenance = new WalMaintenance(this, options).start();
  }

  /** The WAL maintenance started by startMaintenance (its last checkpoint), for tests and diagnostics. */
  get maintenance(): WalMaintenance | null {
    return this.#maintenance;
  }

  /**
   * Waits for the transaction in flight, checkpoints the WAL into the main file and truncates it when no reader
   * holds it (without waiting for readers), then closes the connection. Everything committed is in the database
   * file or the WAL either way; a WAL left behind is replayed by the next open.
   */
  protected async closeBackend(): Promise<void> {
    while (this.#active) await this.#active;
    this.#maintenance?.stop();
    try {
      if (!this.readonly && this.sqlite.open) truncateWalIfFree(this);
    } finally {
      this.#statements.clear();
      this.#pluck.clear();
      if (this.sqlite.open) this.sqlite.close();
    }
  }
}

/** A row read with safeIntegers: each integer as a number where one holds it exactly, else as its decimal text. */
function exactIntegers(row: Record<string, unknown>): Record<string, unknown> {
  for (const [column, value] of Object.entries(row)) {
    if (typeof value === 'bigint') row[column] = value >= Number.MIN_SAFE_INTEGER && value <= Number.MAX_SAFE_INTEGER ? Number(value) : value.toString();
  }
  return row;
}
