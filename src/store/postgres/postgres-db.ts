/**
 * The PostgreSQL backend: a pg pool, the shared SQL of the table families with its `?` placeholders numbered, and
 * transactions on one pooled connection each.
 *
 * Values: every timestamp and price of the agent is text on this backend too (ISO 8601, decimal strings), so rows
 * read back are byte for byte what SQLite returns; bigint (ids, seqs, counts) is parsed to a number (the pool's type
 * parsers, pool.ts), numeric and date/time types stay strings.
 *
 * Many rows are written with one statement (`insert`): INSERT ... VALUES with every value a parameter, up to 500 rows
 * per statement, so a page of 500 versions is one round trip, and identity columns (price_feed.seq) are given in the
 * order of the rows.
 */
import type pg from 'pg';
import { postgresDialect } from '../dialect.ts';
import { insertStatement, SqlDb, type InsertSpec, type Queryable, type SqlParams, type TransactionHooks, type Tx, type WriteOptions } from '../sql-db.ts';

export class PostgresDb extends SqlDb {
  readonly dialect = postgresDialect;
  readonly pool: pg.Pool;
  readonly schema: string;
  #hooks: TransactionHooks = {};

  constructor(init: { location: string; readonly: boolean; pool: pg.Pool; schema: string; now: () => number }) {
    super({ location: init.location, localFile: null, readonly: init.readonly, now: init.now });
    this.pool = init.pool;
    this.schema = init.schema;
  }

  /** Sets the checks every write transaction runs first (the HA lease's fencing token). */
  override setTransactionHooks(hooks: TransactionHooks): void {
    this.#hooks = hooks;
  }

  async all<R>(sql: string, params: SqlParams = []): Promise<R[]> {
    this.refuseInsideTransaction();
    return (await this.pool.query(numbered(sql), params as unknown[])).rows as R[];
  }

  async get<R>(sql: string, params: SqlParams = []): Promise<R | undefined> {
    return (await this.all<R>(sql, params))[0];
  }

  async value<V>(sql: string, params: SqlParams = []): Promise<V | undefined> {
    this.refuseInsideTransaction();
    return firstValue<V>(await this.pool.query({ text: numbered(sql), values: params as unknown[], rowMode: 'array' }));
  }

  async run(sql: string, params: SqlParams = []): Promise<number> {
    this.refuseInsideTransaction();
    return (await this.pool.query(numbered(sql), params as unknown[])).rowCount ?? 0;
  }

  async insert<R = never>(spec: InsertSpec, rows: readonly SqlParams[]): Promise<R[]> {
    this.refuseInsideTransaction();
    return insertRows<R>((query) => this.pool.query(query), spec, rows);
  }

  async *batches<R>(sql: string, params: SqlParams, size: number): AsyncGenerator<R[]> {
    this.refuseInsideTransaction();
    const { client, release } = await this.#checkout();
    let broken: Error | undefined;
    try {
      // A cursor in a read-only repeatable-read transaction: one snapshot, `size` rows in memory at a time.
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      await client.query(`DECLARE batches NO SCROLL CURSOR FOR ${numbered(sql)}`, params as unknown[]);
      for (;;) {
        const { rows } = await client.query(`FETCH FORWARD ${Math.trunc(size)} FROM batches`);
        if (rows.length === 0) break;
        yield rows as R[];
      }
      await client.query('COMMIT');
    } catch (error) {
      broken = connectionBroken(error);
      throw error;
    } finally {
      if (broken === undefined) await client.query('ROLLBACK').catch(() => undefined); // after COMMIT: a no-op
      release(broken);
    }
  }

  /**
   * A pooled connection for a transaction. While it is checked out, an error the server sends between statements
   * (PostgreSQL ending the session: idle_in_transaction_session_timeout while this process was frozen, a restart)
   * is kept, not thrown as an uncaught exception, and the connection is then dropped instead of returned to the pool.
   */
  async #checkout(): Promise<{ client: pg.PoolClient; release: (broken?: Error) => void }> {
    const client = await this.pool.connect();
    let lost: Error | undefined;
    const onError = (error: Error): void => {
      lost = error;
    };
    client.on('error', onError);
    return {
      client,
      release: (broken) => {
        client.off('error', onError);
        client.release(broken ?? lost);
      },
    };
  }

  /** A read-only transaction that sees one snapshot (repeatable read), on a pooled connection. */
  protected async snapshot<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    const { client, release } = await this.#checkout();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const { tx, end } = transactionOn(client, this.now());
      try {
        const result = await fn(tx);
        await client.query('COMMIT');
        return result;
      } finally {
        end();
      }
    } catch (error) {
      broken = connectionBroken(error);
      if (broken === undefined) await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      release(broken);
    }
  }

  protected async transaction<T>(fn: (tx: Tx) => Promise<T>, options: WriteOptions): Promise<T> {
    const { client, release } = await this.#checkout();
    let broken: Error | undefined;
    try {
      const beforeWrite = options.owner === 'consumer' ? undefined : this.#hooks.beforeWrite; // a consumer's own state: any node
      return await runTransaction(client, fn, options, beforeWrite, () => this.now());
    } catch (error) {
      broken = connectionBroken(error);
      throw error;
    } finally {
      release(broken);
    }
  }

  protected async closeBackend(): Promise<void> {
    await this.pool.end();
  }
}

/** BEGIN, the hook, `fn`, COMMIT on `client`; ROLLBACK when anything throws. */
async function runTransaction<T>(
  client: pg.PoolClient,
  fn: (tx: Tx) => Promise<T>,
  options: WriteOptions,
  beforeWrite: ((tx: Queryable) => Promise<void>) | undefined,
  now: () => string,
): Promise<T> {
  // synchronous_commit off: the commit returns before its WAL is flushed; a crash of the server may lose it (never
  // corrupts): the 'relaxed' contract of WriteOptions.
  await client.query(options.durability === 'relaxed' ? 'BEGIN; SET LOCAL synchronous_commit = off' : 'BEGIN');
  let committing: Promise<pg.QueryResult> | undefined;
  const { tx, end } = transactionOn(client, now(), () => {
    committing ??= client.query('COMMIT');
    committing.catch(() => undefined); // awaited below, unless `fn` fails first
  });
  try {
    if (beforeWrite) await beforeWrite(tx);
    const result = await fn(tx);
    // COMMIT of a transaction in which a statement failed answers ROLLBACK, without an error: a statement `fn` issued
    // (pipelined) and did not await must not turn a failure into a success.
    const commit = await (committing ?? client.query('COMMIT'));
    if (commit.command !== 'COMMIT') throw new Error(`the transaction was rolled back at COMMIT (${commit.command}): one of its statements failed`);
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined); // a broken connection is released as broken
    throw error;
  } finally {
    end();
  }
}

/**
 * The statements of one transaction on `client`, refused once `end` was called (or once `commit` was issued through
 * commitBehind). Without `commit` (a read snapshot), commitBehind leaves the COMMIT to the caller.
 */
function transactionOn(client: pg.PoolClient, now: string, commit?: () => void): { tx: Tx; end: () => void } {
  let open = true;
  const on = clientQueryable(client);
  const check = (): void => {
    if (!open) throw new Error('transaction used after it ended');
  };
  const tx: Tx = {
    dialect: postgresDialect,
    now,
    all: async (sql, params) => (check(), on.all(sql, params)),
    get: async (sql, params) => (check(), on.get(sql, params)),
    value: async (sql, params) => (check(), on.value(sql, params)),
    run: async (sql, params) => (check(), on.run(sql, params)),
    insert: async (spec, rows) => (check(), on.insert(spec, rows)),
    commitBehind: async (last) => {
      check();
      commit?.();
      open = commit === undefined;
      return last;
    },
  };
  return { tx, end: () => (open = false) };
}

function clientQueryable(client: pg.PoolClient): Queryable {
  return {
    dialect: postgresDialect,
    all: async <R>(sql: string, params: SqlParams = []) => (await client.query(numbered(sql), params as unknown[])).rows as R[],
    get: async <R>(sql: string, params: SqlParams = []) => (await client.query(numbered(sql), params as unknown[])).rows[0] as R | undefined,
    value: async <V>(sql: string, params: SqlParams = []) =>
      firstValue<V>(await client.query({ text: numbered(sql), values: params as unknown[], rowMode: 'array' })),
    run: async (sql: string, params: SqlParams = []) => (await client.query(numbered(sql), params as unknown[])).rowCount ?? 0,
    insert: <R>(spec: InsertSpec, rows: readonly SqlParams[]) => insertRows<R>((query) => client.query(query), spec, rows),
  };
}

function firstValue<V>(result: pg.QueryResult): V | undefined {
  const row = result.rows[0] as unknown[] | undefined;
  return row === undefined ? undefined : (row[0] as V);
}

type Query = (query: pg.QueryConfig) => Promise<pg.QueryResult>;

/** PostgreSQL binds at most 65,535 parameters to one statement. */
const MAX_PARAMETERS = 65_535;
/** Rows of one INSERT ... VALUES: a deliveries page (500) in one statement, its parameters within the limit. */
const MAX_ROWS_PER_STATEMENT = 500;

/**
 * One INSERT ... VALUES per chunk of up to 500 rows (one statement for a page), every value a parameter of its own:
 * no encoding to parse on either side (a JSON parameter of the rows cost PostgreSQL a third more per page of approved
 * prices). A full chunk runs as a named prepared statement, parsed and planned once per connection (planning 13,000
 * parameters took as long as the insert); a shorter chunk is parsed each time, so that a connection holds one
 * prepared statement per table and column list, whatever the row counts. Rows go in the order given (identity
 * columns such as price_feed.seq follow it) and RETURNING answers in that order.
 *
 * With ON CONFLICT DO UPDATE, a key that repeats among the rows keeps its last row (as the row-by-row SQLite backend
 * ends up with; PostgreSQL refuses to update one row twice in a statement).
 */
async function insertRows<R>(query: Query, spec: InsertSpec, rows: readonly SqlParams[]): Promise<R[]> {
  if (rows.length === 0) return [];
  let input = rows;
  const conflict = spec.onConflict;
  if (conflict && (conflict.update ?? []).length > 0) {
    const keyIndexes = conflict.target.map((c) => spec.columns.indexOf(c));
    const last = new Map<string, number>();
    rows.forEach((row, i) => last.set(JSON.stringify(keyIndexes.map((k) => row[k])), i));
    if (last.size < rows.length) input = [...last.values()].sort((a, b) => a - b).map((i) => rows[i] as SqlParams);
  }
  const full = fullChunkStatement(spec);
  const out: R[] = [];
  for (let start = 0; start < input.length; start += full.rows) {
    const part = input.slice(start, start + full.rows);
    const values = part.flat();
    const result = await query(
      part.length === full.rows ? { name: full.name, text: full.text, values } : { text: insertStatement(spec, valuesList(part.length, spec.columns.length)), values },
    );
    for (const row of result.rows) out.push(row as R);
  }
  return out;
}

interface FullChunkStatement {
  /** Rows per full chunk: at most 500, their parameters within PostgreSQL's limit. */
  readonly rows: number;
  readonly text: string;
  /** The prepared statement's name (pg prepares it on each connection at its first use there). */
  readonly name: string;
}

/**
 * The statement of a full chunk, built once per table, columns and conflict clause (callers may build their spec on
 * each call): its text has 13,000 parameters for a page of approved prices, and building it for every page cost the
 * agent 2 ms of CPU per page (docs/performance.md). Keyed by the statement without its rows.
 */
const fullChunkStatements = new Map<string, FullChunkStatement>();

function fullChunkStatement(spec: InsertSpec): FullChunkStatement {
  const key = insertStatement(spec, '');
  let statement = fullChunkStatements.get(key);
  if (statement === undefined) {
    const rows = Math.min(MAX_ROWS_PER_STATEMENT, Math.floor(MAX_PARAMETERS / spec.columns.length));
    const text = insertStatement(spec, valuesList(rows, spec.columns.length));
    statement = { rows, text, name: `pricing_agent_insert_${fullChunkStatements.size + 1}` };
    fullChunkStatements.set(key, statement);
  }
  return statement;
}

/** `VALUES ($1, $2), ($3, $4)` for `rows` rows of `columns` values. */
function valuesList(rows: number, columns: number): string {
  const tuples: string[] = [];
  for (let r = 0; r < rows; r += 1) {
    const first = r * columns;
    tuples.push(`(${Array.from({ length: columns }, (_, c) => `$${first + c + 1}`).join(', ')})`);
  }
  return `VALUES ${tuples.join(', ')}`;
}

const numberedCache = new Map<string, string>();

/** `?` placeholders as PostgreSQL's `$1, $2, ...`, outside quoted literals and identifiers. Cached per text. */
export function numbered(sql: string): string {
  let text = numberedCache.get(sql);
  if (text !== undefined) return text;
  let out = '';
  let n = 0;
  let quote: string | null = null;
  for (const char of sql) {
    if (quote !== null) {
      if (char === quote) quote = null;
      out += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      out += char;
    } else if (char === '?') {
      n += 1;
      out += `$${n}`;
    } else out += char;
  }
  text = out;
  if (numberedCache.size < 2000) numberedCache.set(sql, text);
  return text;
}

/** The error a connection that must not go back to the pool fails with (the server went away), else undefined. */
function connectionBroken(error: unknown): Error | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  // Class 08: connection exception; 57P01-57P03: the server is shutting down or restarting.
  if (typeof code === 'string' && (code.startsWith('08') || code.startsWith('57P'))) return error;
  if (/Connection terminated|ECONNRESET|EPIPE/.test(error.message)) return error;
  return undefined;
}
