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
};

/** A PostgreSQL array literal ('{1,2,3}', '{"a","b"}'), elements quoted and escaped. */
function postgresArray(values: readonly (number | string)[]): string {
  const items = values.map((v) => (typeof v === 'number' ? String(v) : `"${v.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`));
  return `{${items.join(',')}}`;
}
