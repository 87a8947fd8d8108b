/**
 * Which mirror table each stream goes to, and which fields of a record become columns. The record itself is kept
 * whole as JSON (custom columns of products included); the columns are the keys people and POS queries filter on.
 */
import type { z } from 'zod';
import type {
  CompetitorPrice,
  GridRow,
  Product,
  ProductStoreRecord,
  Transaction,
} from '../api/schemas/index.ts';
import { StoreError } from './errors.ts';

export const MIRROR_STREAMS = ['products', 'product_store', 'transactions', 'competitor_prices'] as const;
export type FixedStream = (typeof MIRROR_STREAMS)[number];
/** One stream per grid: `grid:<grid_id>`, each with its own watermark and cursor. */
export type GridStream = `grid:${string}`;
export type MirrorStream = FixedStream | GridStream;

/** Rows as the read schemas accept them (fields the agent does not need may be absent). */
interface FixedRows {
  products: z.input<typeof Product>;
  product_store: z.input<typeof ProductStoreRecord>;
  transactions: z.input<typeof Transaction>;
  competitor_prices: z.input<typeof CompetitorPrice>;
}
/** The record type a stream's pages carry. */
export type MirrorRow<S extends MirrorStream> = S extends FixedStream ? FixedRows[S] : GridRow;

type Value = string | number | null;

export interface MirrorTable<R> {
  table: string;
  /** The conflict target of the upsert. */
  keys: readonly string[];
  /** Key and main-key columns, in the order `values` returns them. */
  columns: readonly string[];
  /** `rowNumber`: the row's place in a snapshot listing, its key when rows carry none (grids; null otherwise). */
  values(row: R, gridId: string, rowNumber: number | null): Value[];
  updatedAt(row: R): string | null;
}

export function gridStream(gridId: string): GridStream {
  if (gridId.length === 0) throw new StoreError('UNKNOWN_STREAM', 'grid stream needs a grid id');
  return `grid:${gridId}`;
}

const products: MirrorTable<FixedRows['products']> = {
  table: 'mirror_products',
  keys: ['id'],
  columns: ['id', 'item_id', 'sku', 'product_id'],
  values: (r) => [r.id, r.item_id, r.sku ?? null, r.product_id ?? null],
  updatedAt: (r) => r.updated_at ?? null,
};

const productStore: MirrorTable<FixedRows['product_store']> = {
  table: 'mirror_product_store',
  keys: ['id'],
  columns: ['id', 'item_id', 'store_id', 'sku'],
  values: (r) => [r.id, r.item_id, r.store_id ?? null, r.sku ?? null],
  updatedAt: (r) => r.updated_at ?? null,
};

const transactions: MirrorTable<FixedRows['transactions']> = {
  table: 'mirror_transactions',
  keys: ['transaction_id'],
  columns: ['transaction_id', 'product_id', 'store_id', 'timestamp'],
  values: (r) => [r.transaction_id, r.product_id ?? null, r.store_id ?? null, r.timestamp],
  updatedAt: (r) => r.updated_at ?? null,
};

const competitorPrices: MirrorTable<FixedRows['competitor_prices']> = {
  table: 'mirror_competitor_prices',
  keys: ['id'],
  columns: ['id', 'item_id', 'competitor_name', 'observed_at'],
  values: (r) => [Number(r.id), r.item_id ?? null, r.competitor_name, r.observed_at],
  updatedAt: (r) => r.updated_at ?? null,
};

/**
 * Grid rows: keyed by their `grid_item_id` column when the grid has one, else by their row number in a snapshot
 * listing (src/pull/mirror-sources.ts gridListing); `updated_at` when the grid has that column.
 */
const gridRows: MirrorTable<GridRow> = {
  table: 'mirror_grid_rows',
  keys: ['grid_id', 'grid_item_id'],
  columns: ['grid_id', 'grid_item_id'],
  values: (r, gridId, rowNumber) => [gridId, rowNumber ?? gridItemId(r)],
  updatedAt: (r) => (typeof r.updated_at === 'string' ? r.updated_at : null),
};

const FIXED: { [S in FixedStream]: MirrorTable<FixedRows[S]> } = {
  products,
  product_store: productStore,
  transactions,
  competitor_prices: competitorPrices,
};

/** The table of a stream, and the grid id for grid streams. Throws UNKNOWN_STREAM. */
export function mirrorTableOf<S extends MirrorStream>(stream: S): { table: MirrorTable<MirrorRow<S>>; gridId: string } {
  if (stream.startsWith('grid:') && stream.length > 'grid:'.length) {
    return { table: gridRows, gridId: stream.slice('grid:'.length) };
  }
  if ((MIRROR_STREAMS as readonly string[]).includes(stream)) {
    return { table: FIXED[stream as FixedStream] as MirrorTable<MirrorRow<S>>, gridId: '' };
  }
  throw new StoreError('UNKNOWN_STREAM', `unknown mirror stream ${stream}`);
}

function gridItemId(row: GridRow): number {
  const value = row.grid_item_id;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'string' && /^\d{1,15}$/.test(value)) return Number(value);
  throw new StoreError('MIRROR_KEY_MISSING', `grid row without an integer grid_item_id: ${JSON.stringify(value) ?? 'absent'}`);
}
