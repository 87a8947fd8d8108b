/**
 * The few SQL differences between the backends, as fragments the table families put into their otherwise shared
 * SQL. Anything both SQLite (3.45+) and PostgreSQL (15+) understand is written directly, not here.
 */
import type { SqlValue } from './sql-db.ts';
import { currentPricesSelect as postgresCurrentPrices } from './postgres/migrations/0002-pull-outbox.ts';
import { currentPricesSelect as sqliteCurrentPrices } from './sqlite/migrations/0002-pull-outbox.ts';

export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /**
   * `column IN (<values>)` with one placeholder, whatever the number of values: the fragment and the value to bind.
   * `type` is the values' type ('integer' ids or 'text').
   */
  inList(column: string, values: readonly (number | string)[], type?: 'integer' | 'text'): { sql: string; param: SqlValue };
  /** `column` in a form the planner does not read through an index (SQLite's unary +), to keep a scan in seq order. */
  notIndexed(column: string): string;
  /** The larger of two values (SQLite's two-argument max(), PostgreSQL's greatest()). */
  greatest(a: string, b: string): string;
  /** The value of `key` in a JSON object held as text (NULL when absent or JSON null). */
  jsonText(expression: string, key: string): string;
  /** Number of elements of a JSON array held as text. */
  jsonArrayLength(expression: string): string;
  /**
   * A statement that makes feed writers wait for each other until commit, so that seq order is commit order
   * (appendFeedRows); null where the backend has one writer at a time anyway.
   */
  readonly serializeFeedWriters: string | null;
  /**
   * A query without parameters whose value changes when another connection committed (for watchers that must notice
   * commits of other processes without reading tables in a loop).
   */
  readonly changeMarker: string;
  /** A query with one parameter, a table name, that returns a row when the schema has that table. */
  readonly tableExists: string;
  /** The current_prices query of the backend's migrations, for the date `today` (an SQL expression). */
  currentPricesSelect(today: string): string;
  /**
   * approved_prices' record-field columns (RECORD_FIELD_COLUMNS: trace, approval_details) are plain columns the writer
   * fills (PostgreSQL, since migration 0011), not computed from `record` when read (SQLite's VIRTUAL columns).
   */
  readonly recordFieldsStored: boolean;
  /** Whether a UUID-shaped platform id is stored as its 16 bytes (SQLite) rather than as text (delta-state.ts). */
  readonly uuidsAsBytes: boolean;
  /** Whether an HA pair can share this state: a lease row with fencing (PostgreSQL; ha-lease.ts). */
  readonly haLease: boolean;
  /** Queries of the database's own catalog (schema-info.ts), each with the parameters its comment names. */
  readonly catalog: {
    /** The tables of the schema, as `name`. */
    readonly tables: string;
    /** One parameter, a table: its columns that hold data (generated ones left out), in order, as `name`. */
    readonly dataColumns: string;
    /** One parameter, a table: the tables it has foreign keys to, as `name`. */
    readonly referencedTables: string;
    /** One parameter, a table: its primary key columns in key order, as `name`. */
    readonly primaryKey: string;
    /** The identity columns whose sequences must move past copied ids, as `table_name`, `column_name`; null where none need it. */
    readonly identityColumns: string | null;
  };
}

export const sqliteDialect: Dialect = {
  name: 'sqlite',
  inList: (column, values) => ({ sql: `${column} IN (SELECT value FROM json_each(?))`, param: JSON.stringify(values) }),
  notIndexed: (column) => `+${column}`,
  greatest: (a, b) => `max(${a}, ${b})`,
  jsonText: (expression, key) => `json_extract(${expression}, '$.${key}')`,
  jsonArrayLength: (expression) => `json_array_length(${expression})`,
  serializeFeedWriters: null,
  changeMarker: 'PRAGMA data_version',
  tableExists: `SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?`,
  currentPricesSelect: sqliteCurrentPrices,
  recordFieldsStored: false,
  uuidsAsBytes: true,
  haLease: false,
  catalog: {
    tables: `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`,
    dataColumns: `SELECT name FROM pragma_table_xinfo(?) WHERE hidden = 0 ORDER BY cid`, // hidden 2 and 3: generated
    referencedTables: `SELECT DISTINCT "table" AS name FROM pragma_foreign_key_list(?)`,
    primaryKey: `SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk`,
    identityColumns: null, // AUTOINCREMENT keeps up by itself
  },
};

export const postgresDialect: Dialect = {
  name: 'postgres',
  inList: (column, values, type = 'integer') => ({
    sql: `${column} = ANY(?::${type === 'integer' ? 'bigint' : 'text'}[])`,
    param: postgresArray(values),
  }),
  notIndexed: (column) => column,
  greatest: (a, b) => `greatest(${a}, ${b})`,
  jsonText: (expression, key) => `(${expression}::json ->> '${key}')`,
  jsonArrayLength: (expression) => `json_array_length(${expression}::json)`,
  // Any constant works as long as every feed writer uses the same one: 'pfeed' in ASCII.
  serializeFeedWriters: 'SELECT pg_advisory_xact_lock(1885693284)',
  // The feed's last seq: an index lookup; other tables' commits are not what the watchers of it wait for.
  changeMarker: 'SELECT coalesce(max(seq), 0) FROM price_feed',
  tableExists: `SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?`,
  currentPricesSelect: postgresCurrentPrices,
  recordFieldsStored: true,
  uuidsAsBytes: false,
  haLease: true,
  catalog: {
    tables: `SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
    dataColumns: `SELECT column_name AS name FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = ? AND is_generated = 'NEVER' ORDER BY ordinal_position`,
    referencedTables: `SELECT DISTINCT r.relname AS name FROM pg_constraint c
        JOIN pg_class t ON t.oid = c.conrelid JOIN pg_class r ON r.oid = c.confrelid
        JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE c.contype = 'f' AND n.nspname = current_schema() AND t.relname = ?`,
    primaryKey: `SELECT a.attname AS name FROM pg_index i
        JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace
        JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) ON true
        JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
      WHERE i.indisprimary AND n.nspname = current_schema() AND t.relname = ? ORDER BY k.ord`,
    identityColumns: `SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND is_identity = 'YES'`,
  },
};

/** A PostgreSQL array literal ('{1,2,3}', '{"a","b"}'), elements quoted and escaped. */
function postgresArray(values: readonly (number | string)[]): string {
  const items = values.map((v) => (typeof v === 'number' ? String(v) : `"${v.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`));
  return `{${items.join(',')}}`;
}
