/**
 * What the table families of src/store/ run their SQL on (never imported above store/): a `Queryable` (reads and
 * single statements) and `write(fn)`, one transaction. Each backend (sqlite/, postgres/) implements `SqlDb`.
 *
 * SQL is written once, for both backends: `?` placeholders (the PostgreSQL backend numbers them), standard SQL
 * that SQLite 3.45+ and PostgreSQL 15 both run (`ON CONFLICT ... DO NOTHING/UPDATE`, `RETURNING`, `IS NOT DISTINCT
 * FROM`, `count(*) FILTER (...)`), and the few differences behind `Dialect` (dialect.ts). Values are strings,
 * numbers and null: timestamps are ISO 8601 text and money is decimal text on both backends.
 *
 * Transaction rule: `write(fn)` runs `fn` in one transaction that commits when `fn` resolves and rolls back when it
 * throws. Inside `fn`, use only the transaction `fn` is given; never await anything but it (no HTTP, no file I/O):
 * the transaction holds the write lock (SQLite: the only connection; PostgreSQL: row locks, and under HA the lease)
 * for as long as `fn` runs. A call on the database itself from inside `fn` is refused with TRANSACTION_OPEN rather
 * than left to wait for the transaction it is part of.
 *
 * Hot paths (a push batch's checkpoint, a pull page) write their rows with `insert` (many rows, one statement on
 * PostgreSQL, one prepared statement run per row on SQLite) in one transaction: no await per row.
 *
 * Statements of a transaction that do not need each other's answers may be issued together and awaited with
 * Promise.all: they run in the order issued (on PostgreSQL they travel together, one round trip: pool.ts). `fn` must
 * await every statement it issues before it resolves; a failed one fails the transaction.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Dialect } from './dialect.ts';
import { StoreError } from './errors.ts';
import type { MaintenanceOptions, StateDb } from './state-db.ts';

/** A bound value. Booleans are stored as 0/1, JSON as text. */
/** Uint8Array: a BLOB in SQLite, a bytea in PostgreSQL. */
export type SqlValue = string | number | Uint8Array | null;
export type SqlParams = readonly SqlValue[];

/** A multi-row INSERT: `rows` hold the values of `columns`, in that order. */
export interface InsertSpec {
  readonly table: string;
  readonly columns: readonly string[];
  /** ON CONFLICT (target): DO NOTHING without `update`, else DO UPDATE SET c = excluded.c for each listed column. */
  readonly onConflict?: { readonly target: readonly string[]; readonly update?: readonly string[] };
  /** Columns of each inserted (or updated) row to return, in the order of `rows`; ignored rows return nothing. */
  readonly returning?: readonly string[];
}

export interface Queryable {
  readonly dialect: Dialect;
  all<R>(sql: string, params?: SqlParams): Promise<R[]>;
  get<R>(sql: string, params?: SqlParams): Promise<R | undefined>;
  /** The first column of the first row, or undefined when there is no row. */
  value<V>(sql: string, params?: SqlParams): Promise<V | undefined>;
  /** Runs a statement; resolves to the number of rows it changed. */
  run(sql: string, params?: SqlParams): Promise<number>;
  /** Inserts `rows`; resolves to the `returning` columns of the rows written (none without `returning`). */
  insert<R = never>(spec: InsertSpec, rows: readonly SqlParams[]): Promise<R[]>;
}

/** The transaction handed to `write(fn)`; valid until `fn` settles. */
export interface Tx extends Queryable {
  /** The clock's time when the transaction began (every *_at the transaction writes). */
  readonly now: string;
  /**
   * Commits right behind the statements issued so far, without waiting for their answers first (on PostgreSQL the
   * COMMIT travels with them: one round trip less), and resolves with `last` once every statement answered and the
   * commit is done. For a transaction's last statements, whose answers do not decide whether it commits: a failed one
   * still fails the transaction (nothing is committed) and this call. A JavaScript error in building them is thrown
   * too, but what was issued before it may have committed: build them with nothing that can fail but the database.
   * `fn` issues nothing after it and returns what it resolves with.
   */
  commitBehind<T>(last: Promise<T>): Promise<T>;
}

export interface WriteOptions {
  /**
   * 'relaxed': the commit is safe against a crash of the agent, but a power cut (or a crash of the database server)
   * may lose the last such commits. Only for checkpoints whose loss costs repeated work, never data: a push batch
   * checkpoint (the batch is sent again, idempotently), acknowledgement marks (sent again, answered "already
   * acknowledged"). Never for anything acknowledged to the API or read by a POS.
   */
  durability?: 'full' | 'relaxed';
  /**
   * Whose state the transaction writes. 'agent' (the default): the agent's own work, which under HA only the active
   * node commits (the lease's fence, TransactionHooks below). 'consumer': a feed consumer's own bookkeeping
   * (its offset, the seq a store applied, when it was last seen), which any node of an HA pair stores for the consumer
   * that asked, the standby too (docs/ha.md, "The feed on a standby"): such writes never move anything back, so two
   * nodes writing them at once cannot conflict, and they do none of the work the fence guards.
   */
  owner?: 'agent' | 'consumer';
}

/** What every write transaction runs before its own statements (the HA lease's fencing check). */
export interface TransactionHooks {
  /**
   * Runs first in every write transaction of the agent's own work (not those of WriteOptions.owner 'consumer'), on its
   * connection; throws to refuse the transaction (a stale lease).
   */
  beforeWrite?: (tx: Queryable) => Promise<void>;
}

/** Which database's transaction the current async context runs inside (to refuse calls that would deadlock). */
const transactionContext = new AsyncLocalStorage<SqlDb>();

export abstract class SqlDb implements StateDb, Queryable {
  abstract readonly dialect: Dialect;
  readonly location: string;
  readonly localFile: string | null;
  readonly readonly: boolean;
  readonly #clock: () => number;
  readonly #closeHooks = new Set<() => void>();
  #closed = false;

  protected constructor(init: { location: string; localFile: string | null; readonly: boolean; now: () => number }) {
    this.location = init.location;
    this.localFile = init.localFile;
    this.readonly = init.readonly;
    this.#clock = init.now;
  }

  now(): string {
    return new Date(this.#clock()).toISOString();
  }

  get closed(): boolean {
    return this.#closed;
  }

  onClose(hook: () => void): () => void {
    this.#closeHooks.add(hook);
    return () => this.#closeHooks.delete(hook);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const hook of this.#closeHooks) hook();
    this.#closeHooks.clear();
    await this.closeBackend();
  }

  startMaintenance(_options?: MaintenanceOptions): void {
    // Nothing to do unless the backend says otherwise.
  }

  /** Sets the checks every write transaction runs first (the HA lease's fencing), where dialect.haLease says so. */
  setTransactionHooks(_hooks: TransactionHooks): void {
    throw new StoreError('INVALID_ARGUMENT', `the ${this.dialect.name} state cannot be fenced: high availability needs PostgreSQL`);
  }

  abstract all<R>(sql: string, params?: SqlParams): Promise<R[]>;
  abstract get<R>(sql: string, params?: SqlParams): Promise<R | undefined>;
  abstract value<V>(sql: string, params?: SqlParams): Promise<V | undefined>;
  abstract run(sql: string, params?: SqlParams): Promise<number>;
  abstract insert<R = never>(spec: InsertSpec, rows: readonly SqlParams[]): Promise<R[]>;

  /**
   * Runs `fn` in one transaction (see the transaction rule above). Transactions of one handle run one after another;
   * another process (a CLI command beside the daemon) waits for the database's lock.
   * @throws StoreError READ_ONLY, TRANSACTION_OPEN (called from inside a transaction of the same handle).
   */
  async write<T>(fn: (tx: Tx) => Promise<T>, options: WriteOptions = {}): Promise<T> {
    if (this.readonly) throw new StoreError('READ_ONLY', `${this.location} is open read-only`);
    this.refuseInsideTransaction();
    return this.transaction((tx) => transactionContext.run(this, () => fn(tx)), options);
  }

  /**
   * Runs `fn` (reads only) in one read transaction: every statement in it sees the same snapshot, even while another
   * process commits. For reads of several statements that must agree with each other. Same rule as `write`: inside
   * `fn`, use only the Queryable it is given.
   */
  async read<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    this.refuseInsideTransaction();
    return this.snapshot((q) => transactionContext.run(this, () => fn(q)));
  }

  /** The backend's read transaction for `read`. */
  protected abstract snapshot<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;

  /**
   * The rows of `sql` in batches of up to `size`, read from one consistent snapshot (for copying whole tables:
   * constant memory whatever their size). Other calls on this handle wait until the generator is done or dropped.
   * Integers are exact: a number, or decimal text beyond 2^53 (64-bit hashes; PostgreSQL refuses to read those as
   * numbers at all, pool.ts), which either backend stores back into an integer column as the same integer.
   */
  abstract batches<R>(sql: string, params: SqlParams, size: number): AsyncGenerator<R[]>;

  /** The backend's transaction: begin, `fn`, commit (rollback when `fn` throws). */
  protected abstract transaction<T>(fn: (tx: Tx) => Promise<T>, options: WriteOptions): Promise<T>;

  protected abstract closeBackend(): Promise<void>;

  /** Throws TRANSACTION_OPEN when the caller runs inside a transaction of this handle. */
  protected refuseInsideTransaction(): void {
    if (transactionContext.getStore() === this) {
      throw new StoreError('TRANSACTION_OPEN', 'a call on the database from inside one of its transactions: use the transaction');
    }
  }
}

/** The SQL side of a handle; for the table families of src/store/ only. */
export function sqlOf(db: StateDb): SqlDb {
  if (!(db instanceof SqlDb)) throw new TypeError('not a state database opened by openStateDb');
  return db;
}

/** `INSERT INTO t (a, b) <values> ON CONFLICT ... RETURNING ...`, with the backend's `values` part. */
export function insertStatement(spec: InsertSpec, values: string): string {
  let text = `INSERT INTO ${spec.table} (${spec.columns.join(', ')}) ${values}`;
  const conflict = spec.onConflict;
  if (conflict) {
    text += ` ON CONFLICT (${conflict.target.join(', ')}) `;
    const update = conflict.update ?? [];
    text += update.length === 0 ? 'DO NOTHING' : `DO UPDATE SET ${update.map((c) => `${c} = excluded.${c}`).join(', ')}`;
  }
  if (spec.returning && spec.returning.length > 0) text += ` RETURNING ${spec.returning.join(', ')}`;
  return text;
}
