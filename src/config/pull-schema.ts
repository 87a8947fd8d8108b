/**
 * The `pull:` section: approved prices into the outbox (`approved_prices`) and the incremental mirrors (`mirrors`).
 * Every option is documented in config.example.yaml; what the pull does with them: src/pull/ and docs/outbox.md.
 *
 * Filters are checked here with the API's own schemas, so a typo or a malformed date fails at load time, not at
 * the first scheduled run at 3 a.m.
 */
import { validate as validCron } from 'node-cron';
import { z } from 'zod';
import { ApprovedPriceFilters, isoDateTime, LIST_LIMITS } from '../api/schemas/index.ts';
import { pathSchema } from './section-context.ts';
import type { SectionContext } from './section-context.ts';

/**
 * Every minute: a run with nothing new is one deliveries request that answers an empty page (and two small commits),
 * and a price approved on the platform reaches the outbox, and the feed's long-polls, within about a minute.
 */
export const DEFAULT_PULL_SCHEDULE = '* * * * *';
export const DEFAULT_RECONCILE_SCHEDULE = '17 * * * *'; // hourly
export const DEFAULT_RECONCILE_LOOKBACK_DAYS = 90;
export const DEFAULT_MIRROR_SCHEDULE = '*/15 * * * *';

export const MIRROR_STREAM_NAMES = ['products', 'product_store', 'transactions', 'competitor_prices', 'grids'] as const;
export type MirrorStreamName = (typeof MIRROR_STREAM_NAMES)[number];

function cron(fallback: string) {
  return z
    .string()
    .refine((value) => validCron(value), { message: 'not a valid cron expression (e.g. "*/5 * * * *")' })
    .default(fallback);
}

/** The spec's filters of a delivery, without `history` (a delivery of the history would acknowledge nothing). */
const deliveryFilters = ApprovedPriceFilters.omit({ history: true });

const approvedPricesSchema = z.strictObject({
  /** When the daemon pulls (cron, the host's time zone). */
  schedule: cron(DEFAULT_PULL_SCHEDULE),
  /** Only approvals matching these filters are pulled (grid_id, store_id, item_id, sku, approved_*, effective_*). */
  filters: deliveryFilters.default({}),
  /** pagination.limit of each deliveries page (1..500). */
  page_size: z.number().int().min(1).max(LIST_LIMITS.approved_prices.max).default(LIST_LIMITS.approved_prices.max),
  /** The history reconciliation that finds cancellations of prices already acknowledged. */
  reconcile: z
    .strictObject({
      schedule: cron(DEFAULT_RECONCILE_SCHEDULE),
      /** How far back (by approved_at) each reconciliation reads the history; 0 reads all of it. */
      lookback_days: z.number().int().min(0).max(3650).default(DEFAULT_RECONCILE_LOOKBACK_DAYS),
    })
    .prefault({}),
});

function mirrorBase(ctx: SectionContext) {
  return {
    schedule: cron(DEFAULT_MIRROR_SCHEDULE),
    /** Directory for one JSON Lines file per completed listing; null: no export. */
    export: pathSchema(ctx).nullable().default(null),
  };
}

const pageSize = (max: number) => z.number().int().min(1).max(max).nullable().default(null);
const text = z.string().min(1);

function mirrorSchema(ctx: SectionContext) {
  const base = mirrorBase(ctx);
  return z.discriminatedUnion('stream', [
    z.strictObject({
      stream: z.literal('products'),
      ...base,
      page_size: pageSize(LIST_LIMITS.products.max),
      filters: z.strictObject({}).default({}),
    }),
    z.strictObject({
      stream: z.literal('product_store'),
      ...base,
      page_size: pageSize(LIST_LIMITS.product_store.max),
      filters: z.strictObject({ item_id: text.optional(), store_id: text.optional() }).default({}),
    }),
    z.strictObject({
      stream: z.literal('transactions'),
      ...base,
      page_size: pageSize(LIST_LIMITS.transactions.max),
      filters: z
        .strictObject({
          from_date: isoDateTime.optional(),
          to_date: isoDateTime.optional(),
          product_id: text.optional(),
          store_id: text.optional(),
        })
        .default({}),
    }),
    z.strictObject({
      stream: z.literal('competitor_prices'),
      ...base,
      page_size: pageSize(LIST_LIMITS.competitor_prices.max),
      filters: z.strictObject({ item_id: text.optional(), competitor_name: text.optional() }).default({}),
    }),
    z.strictObject({
      stream: z.literal('grids'),
      ...base,
      /** null: the grid's size decides (5000 above 50,000 rows, else the API default). */
      page_size: pageSize(LIST_LIMITS.grid_rows.max),
      /** Grids to mirror; null: every grid the key can read. */
      grid_ids: z.array(text).min(1).nullable().default(null),
      /** Columns to read; null: every column. */
      columns: z.array(text).min(1).nullable().default(null),
    }),
  ]);
}

export function pullSchema(ctx: SectionContext) {
  return z.strictObject({
    approved_prices: approvedPricesSchema.prefault({}),
    mirrors: z
      .array(mirrorSchema(ctx))
      .default([])
      .superRefine((mirrors, check) => {
        const seen = new Set<string>();
        mirrors.forEach((mirror, index) => {
          if (seen.has(mirror.stream)) {
            check.addIssue({ code: 'custom', path: [index, 'stream'], message: `stream ${mirror.stream} is listed twice` });
          }
          seen.add(mirror.stream);
        });
      }),
  });
}

export type PullConfig = z.output<ReturnType<typeof pullSchema>>;
export type ApprovedPricesConfig = PullConfig['approved_prices'];
export type MirrorConfig = PullConfig['mirrors'][number];
