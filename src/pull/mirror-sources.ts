/**
 * Where each mirror stream's pages come from: the list endpoint, the configured filters, the page size. A source
 * knows nothing about state; mirrors.ts passes it the watermark (`updated_after`, inclusive) and the cursor to
 * resume from.
 */
import type { Page } from '../api/call.ts';
import {
  GRID_LARGE_PAGE_SIZE,
  GRID_LARGE_ROW_COUNT,
  type Grid,
} from '../api/schemas/index.ts';
import type { DeepReadonly } from '../config/schema.ts';
import type { MirrorConfig as MirrorEntry } from '../config/pull-schema.ts';
import { gridStream, type FixedStream, type MirrorRow, type MirrorStream } from '../store/mirror-tables.ts';
import type { PullDeps } from './pull-deps.ts';

/**
 * How the rows of a listing are keyed in the mirror table: `own` by their own key (an id, grid_item_id), or
 * `row_number` by their place in a full listing (grids without a grid_item_id column: a snapshot, read whole every
 * time and replacing the grid's rows when it completes).
 */
export type RowKeys = 'own' | 'row_number';

export interface ListingSource<S extends MirrorStream = MirrorStream> {
  readonly stream: S;
  /** Whether the listing takes `updated_after`: false reads everything every time. */
  readonly incremental: boolean;
  readonly keys: RowKeys;
  /** Pages of the listing with `updated_after` (undefined: everything), from `cursor` (undefined: the start). */
  pages(
    updatedAfter: string | undefined,
    cursor: string | undefined,
    signal: AbortSignal | undefined,
  ): AsyncIterable<Page<MirrorRow<S>>>;
}

/** One `pull.mirrors` entry as the frozen Config holds it. */
export type MirrorConfig = DeepReadonly<MirrorEntry>;
export type GridsConfig = Extract<MirrorConfig, { stream: 'grids' }>;
type FixedConfig = Exclude<MirrorConfig, { stream: 'grids' }>;

/** The source of one fixed stream (products, product_store, transactions, competitor_prices). */
export function fixedSource(deps: PullDeps, config: FixedConfig): ListingSource<FixedStream> {
  const { client } = deps;
  const limit = config.page_size ?? undefined;
  const query = (updatedAfter: string | undefined, cursor: string | undefined) => ({
    ...config.filters,
    updated_after: updatedAfter,
    limit,
    cursor,
  });
  const keyed = { incremental: true, keys: 'own' } as const;
  switch (config.stream) {
    case 'products':
      return { stream: 'products', ...keyed, pages: (u, c, signal) => client.products.list(query(u, c), { signal }) };
    case 'product_store':
      return { stream: 'product_store', ...keyed, pages: (u, c, signal) => client.productStore.list(query(u, c), { signal }) };
    case 'transactions':
      return { stream: 'transactions', ...keyed, pages: (u, c, signal) => client.transactions.list(query(u, c), { signal }) };
    case 'competitor_prices':
      return {
        stream: 'competitor_prices',
        ...keyed,
        pages: (u, c, signal) => client.competitorPrices.list(query(u, c), { signal }),
      };
  }
}

export interface GridSources {
  sources: ListingSource[];
  /** Configured grid ids the key cannot see. */
  missing: string[];
}

/** Columns a grid may have that let the mirror key its rows and read only what changed (docs/api-assumptions.md). */
export const GRID_KEY_COLUMN = 'grid_item_id';
export const GRID_TIME_COLUMN = 'updated_at';

/**
 * How one grid is listed. A row carries only the keys of the columns asked for (the document: "keyed by column
 * name"), so the row id and the update time exist only as columns of the grid: when the grids list shows columns
 * named grid_item_id and updated_at, they are asked for too (added to a configured `columns` selection) and the
 * mirror keys rows by grid_item_id and reads with updated_after; with grid_item_id only, it keys them but reads the
 * whole grid; without (or when the list shows no column names) it reads the whole grid as a snapshot keyed by row
 * number.
 */
export function gridListing(
  grid: Pick<Grid, 'columns'>,
  selected: readonly string[] | null,
): { columns: string[] | undefined; keys: RowKeys; incremental: boolean } {
  const known = grid.columns?.map((c) => c.name) ?? null;
  const has = (name: string) => known?.includes(name) ?? false;
  const columns = selected === null ? undefined : [...selected];
  if (columns !== undefined) {
    for (const name of [GRID_KEY_COLUMN, GRID_TIME_COLUMN]) if (has(name) && !columns.includes(name)) columns.push(name);
  }
  const keys: RowKeys = has(GRID_KEY_COLUMN) ? 'own' : 'row_number';
  return { columns, keys, incremental: keys === 'own' && has(GRID_TIME_COLUMN) };
}

/**
 * One source per grid: every grid the key can read, or the configured ones. Grids above GRID_LARGE_ROW_COUNT rows
 * are read in pages of GRID_LARGE_PAGE_SIZE (the spec's recommendation), others with the API's default, unless
 * `page_size` is set.
 */
export async function gridSources(
  deps: PullDeps,
  config: GridsConfig,
  signal: AbortSignal | undefined,
  only?: string,
): Promise<GridSources> {
  const grids: Grid[] = [];
  for await (const page of deps.client.grids.list({}, { signal })) grids.push(...page.items);
  const wanted = only !== undefined ? [only] : config.grid_ids;
  const byId = new Map(grids.map((grid) => [grid.grid_id.toLowerCase(), grid]));
  const chosen = wanted === null ? grids : wanted.flatMap((id) => byId.get(id.toLowerCase()) ?? []);
  const missing = wanted === null ? [] : wanted.filter((id) => !byId.has(id.toLowerCase()));
  const sources = chosen.map((grid): ListingSource => {
    const limit = config.page_size ?? ((grid.row_count ?? 0) > GRID_LARGE_ROW_COUNT ? GRID_LARGE_PAGE_SIZE : undefined);
    const { columns, keys, incremental } = gridListing(grid, config.columns);
    return {
      stream: gridStream(grid.grid_id),
      keys,
      incremental,
      pages: (updatedAfter, cursor, signal) =>
        deps.client.grids.rows(grid.grid_id, { columns, updated_after: updatedAfter, limit, cursor }, { signal }),
    };
  });
  return { sources, missing };
}
