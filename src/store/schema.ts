/**
 * Row types of every table and view of the state database (migrations 0001, 0002, 0004, 0005 and 0007), on both backends.
 *
 * Conventions: timestamps are ISO 8601 text (UTC, from the agent's clock unless the column holds an API value);
 * money is decimal text exactly as the API sent it, never a number; JSON columns hold `JSON.stringify` text.
 * The push pipeline adds its tables (migration 0003_push) by extending `Database` in its own module.
 */
import type { Generated } from 'kysely';

/** Key of product-level rows (store_id NULL) in `current_prices.store_key` and in the per-store export folders. */
export const PRODUCT_LEVEL_STORE_KEY = '_all';

/**
 * `parked`: refused by the platform with a 4xx other than 409/429 (0005_api_state); set aside, not sent again until
 * `pricing-agent pull --retry-parked`. A version learned outside a delivery (history read) has no approval_acks
 * row: nothing to acknowledge.
 */
export const ACK_STATUSES = ['pending', 'acknowledged', 'conflict', 'parked'] as const;
export type AckStatus = (typeof ACK_STATUSES)[number];

import type { FeedKind } from '../feed-rows.ts';

export { FEED_KINDS, type FeedKind } from '../feed-rows.ts';

/** `abandoned`: the server refused the replay; the page was never stored and the cursor did not move. */
export const INTENT_STATUSES = ['pending', 'done', 'abandoned'] as const;
export type IntentStatus = (typeof INTENT_STATUSES)[number];

/** 0001_base: facts about the database itself (key `database_id`, `created_at`). */
export interface AgentMetaTable {
  key: string;
  value: string;
}

/** Every version of every approved price, by its API id. */
export interface ApprovedPricesTable {
  id: number;
  grid_id: string;
  grid_item_id: number;
  item_id: string | null;
  sku: string | null;
  store_id: string | null;
  current_price: string | null;
  proposed_price: string;
  approved_price: string;
  effective_date: string | null;
  currency_code: string;
  proposal_source: string;
  source: string;
  /** JSON array, as received: the field of `record` (RECORD_FIELD_COLUMNS, approved-prices.ts). */
  trace: string;
  approved_at: string;
  approved_by_user_id: string;
  /** JSON object, as received: the field of `record` (RECORD_FIELD_COLUMNS, approved-prices.ts). */
  approval_details: string;
  export_status: string;
  exported_at: string | null;
  /** Set when the version arrives cancelled or a later read shows it cancelled. */
  cancelled_at: string | null;
  predecessor_id: number | null;
  amendment_reason: string | null;
  delivery_channel: string | null;
  /** The whole record as first received (JSON), unknown fields included. */
  record: string;
  /** The delivery that brought it; null when learned from a history read. */
  intent_id: number | null;
  received_at: string;
}

/**
 * 0004_ack_state: the acknowledgement state of each delivered version, one narrow row per approval_id (kept out
 * of approved_prices, whose ~2 KB rows a status change would rewrite). No row: not delivered, nothing to
 * acknowledge.
 */
export interface ApprovalAcksTable {
  approval_id: number;
  status: AckStatus;
  /** Set exactly when status is `conflict` or `parked`: why (a conflict's reason, a parked id's HTTP refusal). */
  conflict_reason: string | null;
  /** When status left `pending` (acknowledged or conflict). */
  acked_at: string | null;
}

export interface DeliveryIntentsTable {
  id: Generated<number>;
  job: string;
  request_id: string;
  /** JSON object: the delivery filters sent with the request. */
  filters: string;
  cursor: string | null;
  page_limit: number | null;
  status: IntentStatus;
  created_at: string;
  done_at: string | null;
  next_cursor: string | null;
  row_count: number | null;
}

export interface PullStateTable {
  job: string;
  cursor: string | null;
  updated_at: string;
}

/** The change feed POS systems read. Append-only (triggers refuse UPDATE and DELETE). */
export interface PriceFeedTable {
  seq: Generated<number>;
  kind: FeedKind;
  approval_id: number;
  predecessor_id: number | null;
  item_id: string | null;
  sku: string | null;
  store_id: string | null;
  approved_price: string;
  currency_code: string;
  effective_date: string | null;
  recorded_at: string;
}

export interface ConsumerOffsetsTable {
  consumer: string;
  last_seq: number;
  updated_at: string;
}

/** View: the price in force today (host's local date) per (item_id, store_id). */
export interface CurrentPricesView {
  item_id: string;
  store_id: string | null;
  /** store_id, or `_all` for product-level prices. Never null. */
  store_key: string;
  sku: string | null;
  approved_price: string;
  currency_code: string;
  /** effective_date, or the approval's date when the API sent none. */
  effective_date: string;
  approval_id: number;
  predecessor_id: number | null;
  approved_at: string;
}

interface MirrorColumns {
  updated_at: string | null;
  /** The record as received (JSON). */
  record: string;
  synced_at: string;
}

export interface MirrorProductsTable extends MirrorColumns {
  id: string;
  item_id: string;
  sku: string | null;
  product_id: string | null;
}

export interface MirrorProductStoreTable extends MirrorColumns {
  id: string;
  item_id: string;
  store_id: string | null;
  sku: string | null;
}

export interface MirrorTransactionsTable extends MirrorColumns {
  transaction_id: string;
  product_id: string | null;
  store_id: string | null;
  timestamp: string;
}

export interface MirrorCompetitorPricesTable extends MirrorColumns {
  id: number;
  item_id: string | null;
  competitor_name: string;
  observed_at: string;
}

export interface MirrorGridRowsTable extends MirrorColumns {
  grid_id: string;
  grid_item_id: number;
}

export interface StreamStateTable {
  stream: string;
  /** `updated_after` of the next listing; moves only when a listing completes. */
  watermark: string | null;
  /** Cursor of the listing in progress; null between listings. */
  cursor: string | null;
  /** Set by the first page of a listing; non-null means a listing is in progress. */
  listing_started_at: string | null;
  /** Largest `updated_at` stored during the listing in progress. */
  listing_max_updated_at: string | null;
  listing_rows: number;
  last_success_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  updated_at: string;
}

export interface OutboxExportsTable {
  /** store_id, `_all` for product-level rows. */
  store_key: string;
  /** Every feed row of this store with seq <= last_seq is in a renamed, fsynced file. */
  last_seq: number;
  /** A file for (last_seq, pending_to_seq] is being written; redone with the same name after a crash. */
  pending_to_seq: number | null;
  last_file: string | null;
  updated_at: string;
}

export interface OutboxExportScanTable {
  id: number;
  /** Every store's feed rows with seq <= scanned_seq are exported. */
  scanned_seq: number;
  updated_at: string;
}

/** 0005_api_state: moments before which a kind of request is not sent (`retry_after`, `job:<id>`). */
export interface ApiPacingTable {
  key: string;
  /** Epoch milliseconds. */
  until_ms: number;
  /** For `job:<id>`: the job's status at its last poll. */
  detail: string | null;
  updated_at: string;
}

/** 0005_api_state: choices the document leaves open that the agent found out from the server. */
export interface ApiFactsTable {
  key: string;
  value: string;
  learned_at: string;
}

/** 0007_feed: the last authenticated request of each feed consumer. */
export interface FeedConsumersTable {
  consumer: string;
  last_seen_at: string;
}

/** 0007_feed: per consumer and store, the highest seq the store confirmed it applied (never moves back). */
export interface FeedAppliedTable {
  consumer: string;
  store_id: string;
  applied_seq: number;
  /** As the store reported it; null when it did not say. */
  applied_at: string | null;
  /** When the agent recorded the confirmation. */
  confirmed_at: string;
}

export interface Database {
  api_pacing: ApiPacingTable;
  api_facts: ApiFactsTable;
  agent_meta: AgentMetaTable;
  approved_prices: ApprovedPricesTable;
  approval_acks: ApprovalAcksTable;
  delivery_intents: DeliveryIntentsTable;
  pull_state: PullStateTable;
  price_feed: PriceFeedTable;
  consumer_offsets: ConsumerOffsetsTable;
  current_prices: CurrentPricesView;
  mirror_products: MirrorProductsTable;
  mirror_product_store: MirrorProductStoreTable;
  mirror_transactions: MirrorTransactionsTable;
  mirror_competitor_prices: MirrorCompetitorPricesTable;
  mirror_grid_rows: MirrorGridRowsTable;
  stream_state: StreamStateTable;
  outbox_exports: OutboxExportsTable;
  outbox_export_scan: OutboxExportScanTable;
  feed_consumers: FeedConsumersTable;
  feed_applied: FeedAppliedTable;
}
