import { callList, itemsPage, type CallOptions } from '../call.ts';
import { GridPage, GridRowsPage } from '../schemas/index.ts';
import type { ApiTransport } from '../transport.ts';

export interface GridListQuery {
  limit?: number;
  cursor?: string;
}

export interface GridRowsQuery {
  /** Column names to return; default every column. */
  columns?: readonly string[];
  updated_after?: string;
  /** Default 1000, max 10000; the spec recommends 5000 for grids above about 50,000 rows. */
  limit?: number;
  cursor?: string;
}

export function gridsApi(t: ApiTransport) {
  return {
    list: (q: GridListQuery = {}, o: CallOptions = {}) => callList(t, 'grids.list', 'grids', GridPage, itemsPage, { ...q }, o),
    /** Pages of rows; each page also carries the column schema and the grid id. */
    rows: (gridId: string, q: GridRowsQuery = {}, o: CallOptions = {}) =>
      callList(
        t,
        'grids.rows',
        'grid_rows',
        GridRowsPage,
        (p) => ({ items: p.data, nextCursor: p.next_cursor, columns: p.columns ?? null, gridId: p.grid_id ?? gridId }),
        { ...q, columns: q.columns?.join(',') },
        { ...o, id: gridId },
      ),
  };
}
