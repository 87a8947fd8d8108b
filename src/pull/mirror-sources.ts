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

export interface ListingSource<S extends MirrorStream = MirrorStream> {
  readonly stream: S;
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
  switch (config.stream) {
    case 'products':
      return { stream: 'products', pages: (u, c, signal) => client.products.list(query(u, c), { signal }) };
    case 'product_store':
      return { stream: 'product_store', pages: (u, c, signal) => client.productStore.list(query(u, c), { signal }) };
    case 'transactions':
      return { stream: 'transactions', pages: (u, c, signal) => client.transactions.list(query(u, c), { signal }) };
    case 'competitor_prices':
      return {
        stream: 'competitor_prices',
        pages: (u, c, signal) => client.competitorPrices.list(query(u, c), { signal }),
      };
  }
}

export interface GridSources {
  sources: ListingSource[];
  /** Configured grid ids the key cannot see. */
  missing: string[];
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
    const limit = config.page_size ?? (grid.row_count > GRID_LARGE_ROW_COUNT ? GRID_LARGE_PAGE_SIZE : undefined);
    const columns = config.columns ?? undefined;
    return {
      stream: gridStream(grid.grid_id),
      pages: (updatedAfter, cursor, signal) =>
        deps.client.grids.rows(grid.grid_id, { columns, updated_after: updatedAfter, limit, cursor }, { signal }),
    };
  });
  return { sources, missing };
}
