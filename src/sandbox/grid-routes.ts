/**
 * GET /v1/grids (cursor = position in the catalog) and GET /v1/grids/{grid_id}/rows (cursor = last grid_item_id;
 * `columns` selects columns by name; `updated_after` is inclusive).
 */
import { LIST_LIMITS, type GridColumn, type ValidationError } from '../api/schemas/index.ts';
import { encodeCursor } from './cursor.ts';
import { NOT_FOUND, invalid, isoTime, json, validationError, type Reply } from './http-io.ts';
import { readListQuery } from './query.ts';
import type { Router } from './router.ts';
import type { ApiContext } from './world.ts';

function listGrids(ctx: ApiContext): Reply {
  const q = readListQuery(ctx.query, 'grids', LIST_LIMITS.grids, {});
  if (Array.isArray(q)) return invalid(q);
  const grids = ctx.world.grids.grids;
  const start = q.after ?? 0;
  const page = grids.slice(start, start + q.limit);
  const end = start + page.length;
  return json(200, {
    items: page.map(({ grid_id, name, columns, row_count, updated_at }) => ({ grid_id, name, columns, row_count, updated_at })),
    next_cursor: end < grids.length ? encodeCursor('grids', end) : null,
  });
}

function selectColumns(all: readonly GridColumn[], raw: string | null): readonly GridColumn[] | ValidationError[] {
  if (raw === null || raw.trim() === '') return all;
  const selected: GridColumn[] = [];
  for (const name of raw.split(',').map((part) => part.trim()).filter((part) => part !== '')) {
    const column = all.find((c) => c.name === name);
    if (!column) return [validationError(['query', 'columns'], `Value error, unknown column '${name}'`, 'value_error', raw)];
    if (!selected.includes(column)) selected.push(column);
  }
  return selected;
}

function gridRows(ctx: ApiContext): Reply {
  const { grids } = ctx.world;
  const grid = grids.byId((ctx.params.grid_id ?? '').toLowerCase());
  if (!grid) return NOT_FOUND;
  const list = `grid_rows:${grid.grid_id}`;
  const q = readListQuery(ctx.query, list, LIST_LIMITS.grid_rows, { updated_after: 'datetime' });
  const columns = selectColumns(grid.columns, ctx.query.get('columns'));
  const errors = [...(Array.isArray(q) ? q : []), ...(isErrors(columns) ? columns : [])];
  if (Array.isArray(q) || isErrors(columns)) return invalid(errors);
  const updatedAfter = q.filters.updated_after === undefined ? null : Date.parse(q.filters.updated_after);
  const data: Record<string, string | number | null>[] = [];
  let lastId = 0;
  let more = false;
  for (let n = (q.after ?? 0) + 1; n <= grid.row_count; n += 1) {
    const row = grids.row(grid, n);
    if (updatedAfter !== null && row.updatedAt < updatedAfter) continue;
    if (data.length === q.limit) {
      more = true;
      break;
    }
    const out: Record<string, string | number | null> = { grid_item_id: n };
    for (const column of columns) out[column.name] = row.cells[column.name] ?? null;
    out.updated_at = isoTime(row.updatedAt);
    data.push(out);
    lastId = n;
  }
  return json(200, { grid_id: grid.grid_id, columns, data, next_cursor: more ? encodeCursor(list, lastId) : null });
}

function isErrors(value: readonly GridColumn[] | ValidationError[]): value is ValidationError[] {
  return value.length > 0 && 'loc' in value[0]!;
}

export function addGridRoutes(router: Router<ApiContext>): void {
  router.add('GET', '/v1/grids', 'none', listGrids).add('GET', '/v1/grids/:grid_id/rows', 'none', gridRows);
}
