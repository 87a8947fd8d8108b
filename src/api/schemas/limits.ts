/**
 * Every numeric limit of the spec ("Limits" and the endpoint tables), in one place, shared by the client (which
 * refuses an out-of-range value locally instead of paying a 422 round trip) and the sandbox (which enforces them).
 * Where the spec says "not shown" the value is our documented choice (docs/sandbox.md).
 */
export interface PageLimit {
  readonly default: number;
  readonly max: number;
}

export const LIST_LIMITS = {
  products: { default: 1000, max: 10_000 }, // not shown in the spec; same as transactions
  product_store: { default: 1000, max: 10_000 }, // not shown in the spec; same as transactions
  transactions: { default: 1000, max: 10_000 },
  competitor_prices: { default: 1000, max: 10_000 }, // not shown in the spec; same as transactions
  grids: { default: 100, max: 1000 }, // not shown in the spec
  grid_rows: { default: 1000, max: 10_000 },
  approved_prices: { default: 100, max: 500 },
} as const satisfies Record<string, PageLimit>;
export type ListName = keyof typeof LIST_LIMITS;

/** Grids above about this many rows should be paged with GRID_LARGE_PAGE_SIZE (spec recommendation). */
export const GRID_LARGE_ROW_COUNT = 50_000;
export const GRID_LARGE_PAGE_SIZE = 5000;

/** POST /v1/approved_prices/acknowledge takes at most this many ids. */
export const ACK_BATCH_MAX = 500;

/** Bulk batches: recommended 500..2000; the agent allows 1..10000 (config `batch_size`). */
export const BULK_BATCH_DEFAULT = 1000;
export const BULK_BATCH_MAX = 10_000;

/** Job polling pace recommended by the spec, in milliseconds. */
export const JOB_POLL_RUNNING_MS = { min: 5_000, max: 10_000 } as const;
export const JOB_POLL_QUEUED_MS = { min: 30_000, max: 60_000 } as const;

/** Retry backoff of the spec: start 1 s, cap 30 s, at most 5 attempts. */
export const RETRY_BASE_MS = 1_000; // 1 s
export const RETRY_CAP_MS = 30_000; // 30 s
export const RETRY_MAX_ATTEMPTS = 5;

/** The fixed live-key prefix of every API key. */
export const API_KEY_PREFIX = 'svc_live_';
