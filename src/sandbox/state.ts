/**
 * The state snapshot tests assert on (`control.state()`, `GET /_sandbox/state`): counts and business keys per
 * resource, acknowledgement bookkeeping, and every counter of misbehaviour an agent must not show (requests with a
 * rejected key, early requests inside a Retry-After window, calls to removed endpoints, competitor single creates).
 * `keys: false` leaves the key lists out (they are large after a benchmark).
 */
import type { ExportStatus } from '../api/schemas/index.ts';
import type { ApprovalCounts } from './approval-book.ts';
import type { KeyRejection } from './auth.ts';
import type { DialectName } from './dialect.ts';
import type { FaultConfig, FaultKind } from './faults.ts';
import type { EarlyRequest, RateLimitConfig } from './rate-limit.ts';
import type { World } from './world.ts';

export interface TableState<K> {
  readonly count: number;
  /** Rows deleted (and not re-created under the same id). */
  readonly deleted: number;
  readonly keys?: K[];
}

export interface CompetitorKey {
  readonly competitor_name: string;
  readonly item_id: string | null;
  readonly competitor_sku: string | null;
  readonly observed_at: string;
}

export interface AckRecord {
  readonly id: number;
  /** Successful acknowledgements (0 or 1: an id is acknowledged once). */
  readonly ack_count: number;
  /** Acknowledge batches refused because this id was already acknowledged. */
  readonly conflicting_acks: number;
  /** Acknowledge batches accepted while this id was already acknowledged (dialects that accept repeats). */
  readonly repeat_acks: number;
}

export interface SandboxState {
  readonly seed: number;
  readonly dialect: DialectName;
  readonly user_id: string;
  readonly api_key_id: string;
  readonly stores: readonly string[];
  readonly products: TableState<string>;
  /** store_id null: a product-level record (a dialect that takes product_store writes without a store). */
  readonly product_store: TableState<{ item_id: string; store_id: string | null }>;
  readonly transactions: TableState<string>;
  readonly competitor_prices: TableState<CompetitorKey> & { readonly single_creates: number };
  readonly jobs: Readonly<Record<string, number>>;
  readonly approvals: ApprovalCounts & { readonly acks: AckRecord[] };
  readonly deliveries: { readonly requests: number; readonly replays: number };
  readonly exports: ExportStatus[];
  readonly requests: {
    readonly total: number;
    readonly removed_endpoint: number;
    readonly forbidden: number;
    readonly internal_errors: number;
  };
  readonly auth: { readonly rejected_total: number; readonly rejected: Readonly<Record<KeyRejection, number>> };
  readonly rate_limit: {
    readonly config: RateLimitConfig | null;
    readonly limited: number;
    readonly early_requests: readonly EarlyRequest[];
  };
  readonly faults: { readonly config: FaultConfig | null; readonly injected: Readonly<Record<Exclude<FaultKind, 'none'>, number>> };
}

function table<R, K>(rows: { size: number; deletedCount: number; rows(): Iterable<R> }, keys: boolean, keyOf: (row: R) => K): TableState<K> {
  const state = { count: rows.size, deleted: rows.deletedCount };
  if (!keys) return state;
  const list: K[] = [];
  for (const row of rows.rows()) list.push(keyOf(row));
  return { ...state, keys: list };
}

export function snapshot(world: World, keys: boolean): SandboxState {
  const rejected = world.keys.rejected;
  const acks: AckRecord[] = [];
  for (const a of world.approvals.all()) {
    if (a.ackCount > 0 || a.conflictingAcks > 0 || a.repeatAcks > 0) {
      acks.push({ id: a.id, ack_count: a.ackCount, conflicting_acks: a.conflictingAcks, repeat_acks: a.repeatAcks });
    }
  }
  return {
    seed: world.options.seed,
    dialect: world.dialect.name,
    user_id: world.keys.userId,
    api_key_id: world.keys.keyId,
    stores: world.stores,
    products: table(world.products.table, keys, (row) => row.item_id),
    product_store: table(world.productStore.table, keys, (row) => ({ item_id: row.item_id, store_id: row.store_id })),
    transactions: table(world.transactions.table, keys, (row) => row.transaction_id),
    competitor_prices: {
      ...table(world.competitorPrices.table, keys, (row) => ({
        competitor_name: row.competitor_name,
        item_id: row.item_id,
        competitor_sku: row.competitor_sku,
        observed_at: row.observed_at,
      })),
      single_creates: world.competitorPrices.singleCreates(),
    },
    jobs: { count: [...world.jobs.all()].length, ...world.jobs.countByStatus() },
    approvals: { ...world.approvals.counts(), acks },
    deliveries: { requests: world.counters.delivery_requests, replays: world.counters.delivery_replays },
    exports: world.exports.all(),
    requests: {
      total: world.counters.requests,
      removed_endpoint: world.counters.removed_endpoint_requests,
      forbidden: world.counters.forbidden_requests,
      internal_errors: world.counters.internal_errors,
    },
    auth: { rejected_total: Object.values(rejected).reduce((sum, n) => sum + n, 0), rejected },
    rate_limit: {
      config: world.rateLimiter.config,
      limited: world.rateLimiter.limited,
      early_requests: [...world.rateLimiter.early],
    },
    faults: { config: world.faults.config, injected: { ...world.faults.injected } },
  };
}
