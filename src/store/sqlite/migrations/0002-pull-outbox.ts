/**
 * 0002_pull_outbox: approved prices, delivery intents, the change feed and its consumers, the current-prices view,
 * the mirror tables, stream state and the per-store file exports. Column meanings: src/store/schema.ts and
 * docs/outbox.md. All tables are STRICT: a value of the wrong type is an error, not a silent conversion.
 */
import type { Migration } from 'kysely/migration';
import { statementsMigration } from '../../migrate.ts';
import { PRODUCT_LEVEL_STORE_KEY } from '../../schema.ts';

/**
 * The price in force on `today` (an SQL expression giving YYYY-MM-DD) per (item_id, store_id): among versions that
 * are not cancelled and not superseded by an amendment, the one with the latest effective date on or before
 * `today`; ties go to the later approval, then the higher id. A version without effective_date takes effect on its
 * approval's (UTC) date. Versions without item_id have no key here; they are in the feed only. An amendment
 * supersedes its predecessor for good, even if the amendment is itself cancelled later.
 *
 * Frozen with this migration: the view is created from it and `currentPricesAt` runs the same text with `?`, so
 * the tested query and the POS view cannot drift apart. A later change is a new migration with a new function.
 *
 * PostgreSQL's 0002 runs the same rule (postgres/migrations/0002-pull-outbox.ts): PostgreSQL 15 requires a name on a
 * subquery in FROM, given as `subqueryName`; without one the text is SQLite's view as it stands in its databases.
 */
export function currentPricesSelect(today: string, subqueryName?: string): string {
  return `SELECT item_id, store_id, coalesce(store_id, '${PRODUCT_LEVEL_STORE_KEY}') AS store_key, sku,
    approved_price, currency_code, effective_from AS effective_date, id AS approval_id, predecessor_id, approved_at
  FROM (
    SELECT a.*, coalesce(a.effective_date, substr(a.approved_at, 1, 10)) AS effective_from,
      row_number() OVER (
        PARTITION BY a.item_id, a.store_id
        ORDER BY coalesce(a.effective_date, substr(a.approved_at, 1, 10)) DESC, a.approved_at DESC, a.id DESC
      ) AS rank_in_key
    FROM approved_prices a
    WHERE a.item_id IS NOT NULL
      AND a.cancelled_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM approved_prices s WHERE s.predecessor_id = a.id)
      AND coalesce(a.effective_date, substr(a.approved_at, 1, 10)) <= ${today}
  )${subqueryName === undefined ? '' : ` AS ${subqueryName}`}
  WHERE rank_in_key = 1`;
}

const STATEMENTS = [
  `CREATE TABLE delivery_intents (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job TEXT NOT NULL,
    request_id TEXT NOT NULL UNIQUE,
    filters TEXT NOT NULL,
    cursor TEXT,
    page_limit INTEGER,
    status TEXT NOT NULL CHECK (status IN ('pending', 'done', 'abandoned')),
    created_at TEXT NOT NULL,
    done_at TEXT,
    next_cursor TEXT,
    row_count INTEGER
  ) STRICT`,
  // At most one page in flight per pull job: the one to replay after a crash.
  `CREATE UNIQUE INDEX delivery_intents_one_pending ON delivery_intents (job) WHERE status = 'pending'`,
  `CREATE TABLE pull_state (job TEXT PRIMARY KEY, cursor TEXT, updated_at TEXT NOT NULL) STRICT`,
  `CREATE TABLE approved_prices (
    id INTEGER PRIMARY KEY,
    grid_id TEXT NOT NULL,
    grid_item_id INTEGER NOT NULL,
    item_id TEXT,
    sku TEXT,
    store_id TEXT,
    current_price TEXT,
    proposed_price TEXT NOT NULL,
    approved_price TEXT NOT NULL,
    effective_date TEXT,
    currency_code TEXT NOT NULL,
    proposal_source TEXT NOT NULL,
    source TEXT NOT NULL,
    approved_at TEXT NOT NULL,
    approved_by_user_id TEXT NOT NULL,
    export_status TEXT NOT NULL,
    exported_at TEXT,
    cancelled_at TEXT,
    predecessor_id INTEGER,
    amendment_reason TEXT,
    delivery_channel TEXT,
    record TEXT NOT NULL,
    -- Kept once, in record; these read as JSON text. (Writing them twice cost a third of the page insert.)
    trace TEXT GENERATED ALWAYS AS (json_extract(record, '$.trace')) VIRTUAL,
    approval_details TEXT GENERATED ALWAYS AS (json_extract(record, '$.approval_details')) VIRTUAL,
    intent_id INTEGER REFERENCES delivery_intents (id),
    received_at TEXT NOT NULL,
    ack_status TEXT CHECK (ack_status IN ('pending', 'acknowledged', 'conflict')),
    conflict_reason TEXT CHECK ((ack_status = 'conflict') = (conflict_reason IS NOT NULL)),
    acked_at TEXT
  ) STRICT`,
  `CREATE INDEX approved_prices_ack_pending ON approved_prices (id) WHERE ack_status = 'pending'`,
  `CREATE INDEX approved_prices_predecessor ON approved_prices (predecessor_id) WHERE predecessor_id IS NOT NULL`,
  `CREATE INDEX approved_prices_item_store ON approved_prices (item_id, store_id)`,
  `CREATE TABLE price_feed (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('price', 'withdrawal')),
    approval_id INTEGER NOT NULL REFERENCES approved_prices (id),
    predecessor_id INTEGER,
    item_id TEXT,
    sku TEXT,
    store_id TEXT,
    approved_price TEXT NOT NULL,
    currency_code TEXT NOT NULL,
    effective_date TEXT,
    recorded_at TEXT NOT NULL,
    UNIQUE (approval_id, kind)
  ) STRICT`,
  `CREATE INDEX price_feed_store ON price_feed (store_id, seq)`,
  // Append-only is the contract POS systems rely on; enforced for every writer, not only the agent.
  `CREATE TRIGGER price_feed_no_update BEFORE UPDATE ON price_feed
    BEGIN SELECT RAISE(ABORT, 'price_feed is append-only'); END`,
  `CREATE TRIGGER price_feed_no_delete BEFORE DELETE ON price_feed
    BEGIN SELECT RAISE(ABORT, 'price_feed is append-only'); END`,
  `CREATE TABLE consumer_offsets (
    consumer TEXT PRIMARY KEY CHECK (length(consumer) > 0),
    last_seq INTEGER NOT NULL CHECK (last_seq >= 0),
    updated_at TEXT NOT NULL
  ) STRICT`,
  // An offset past the end of the feed would silently skip rows appended later: refused for POS writers too.
  `CREATE TRIGGER consumer_offsets_within_feed_insert BEFORE INSERT ON consumer_offsets
    WHEN NEW.last_seq > (SELECT coalesce(max(seq), 0) FROM price_feed)
    BEGIN SELECT RAISE(ABORT, 'last_seq is beyond the last seq of price_feed'); END`,
  `CREATE TRIGGER consumer_offsets_within_feed_update BEFORE UPDATE ON consumer_offsets
    WHEN NEW.last_seq > (SELECT coalesce(max(seq), 0) FROM price_feed)
    BEGIN SELECT RAISE(ABORT, 'last_seq is beyond the last seq of price_feed'); END`,
  // "Today" is the local date of the process that reads the view (the POS host), not UTC.
  `CREATE VIEW current_prices AS ${currentPricesSelect(`date('now', 'localtime')`)}`,
  `CREATE TABLE mirror_products (
    id TEXT PRIMARY KEY, item_id TEXT NOT NULL, sku TEXT, product_id TEXT,
    updated_at TEXT, record TEXT NOT NULL, synced_at TEXT NOT NULL
  ) STRICT`,
  `CREATE INDEX mirror_products_item ON mirror_products (item_id)`,
  `CREATE TABLE mirror_product_store (
    id TEXT PRIMARY KEY, item_id TEXT NOT NULL, store_id TEXT, sku TEXT,
    updated_at TEXT, record TEXT NOT NULL, synced_at TEXT NOT NULL
  ) STRICT`,
  `CREATE INDEX mirror_product_store_item_store ON mirror_product_store (item_id, store_id)`,
  `CREATE TABLE mirror_transactions (
    transaction_id TEXT PRIMARY KEY, product_id TEXT, store_id TEXT, timestamp TEXT NOT NULL,
    updated_at TEXT, record TEXT NOT NULL, synced_at TEXT NOT NULL
  ) STRICT`,
  `CREATE INDEX mirror_transactions_timestamp ON mirror_transactions (timestamp)`,
  `CREATE TABLE mirror_competitor_prices (
    id INTEGER PRIMARY KEY, item_id TEXT, competitor_name TEXT NOT NULL, observed_at TEXT NOT NULL,
    updated_at TEXT, record TEXT NOT NULL, synced_at TEXT NOT NULL
  ) STRICT`,
  `CREATE INDEX mirror_competitor_prices_item ON mirror_competitor_prices (item_id)`,
  `CREATE TABLE mirror_grid_rows (
    grid_id TEXT NOT NULL, grid_item_id INTEGER NOT NULL,
    updated_at TEXT, record TEXT NOT NULL, synced_at TEXT NOT NULL,
    PRIMARY KEY (grid_id, grid_item_id)
  ) STRICT`,
  `CREATE TABLE stream_state (
    stream TEXT PRIMARY KEY,
    watermark TEXT,
    cursor TEXT,
    listing_started_at TEXT,
    listing_max_updated_at TEXT,
    listing_rows INTEGER NOT NULL DEFAULT 0,
    last_success_at TEXT,
    last_error TEXT,
    last_error_at TEXT,
    updated_at TEXT NOT NULL
  ) STRICT`,
  `CREATE TABLE outbox_exports (
    store_key TEXT PRIMARY KEY,
    last_seq INTEGER NOT NULL,
    pending_to_seq INTEGER,
    last_file TEXT,
    updated_at TEXT NOT NULL
  ) STRICT`,
  `CREATE TABLE outbox_export_scan (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    scanned_seq INTEGER NOT NULL,
    updated_at TEXT NOT NULL
  ) STRICT`,
];

export const migration0002PullOutbox: Migration = statementsMigration(STATEMENTS);
