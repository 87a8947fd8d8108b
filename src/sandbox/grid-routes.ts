/**
 * GET /v1/grids (cursor = position in the catalog) and GET /v1/grids/{grid_id}/rows (cursor = last row number;
 * `columns` selects columns by name; `updated_after` is inclusive). A row carries the selected columns' keys only.
 */
import { LIST_LIMITS, type GridColumn, type ValidationError } from '../api/schemas/index.ts';
import type { GridDef } from './grids.ts';
import { NOT_FOUND, invalid, json, validationError, type Reply } from './http-io.ts';
import { isReply, listContext, nextCursorOf, readListQuery } from './query.ts';
import type { Router } from './router.ts';
import type { ApiContext } from './world.ts';

/** A grid in the list. Its fields are not shown beyond a column summary and a row count: the dialect names them. */
function gridJson(grid: GridDef, fields: 'grid_id' | 'id'): Record<string, unknown> {
  const { grid_id, name, columns, row_count, updated_at } = grid;
  if (fields === 'grid_id') return { grid_id, name, columns, row_count, updated_at };
  return { id: grid_id, title: name, column_summary: { count: columns.length, names: columns.map((c) => c.name) }, rows: row_count };
}

function listGrids(ctx: ApiContext): Reply {
  const context = listContext(ctx);
  const q = readListQuery(ctx.query, 'grids', LIST_LIMITS.grids, {}, context);
  if (isReply(q)) return q;
  const { dialect } = ctx.world;
  const grids = ctx.world.grids.grids;
  const start = q.after ?? 0;
  const page = grids.slice(start, start + q.limit);
  const end = start + page.length;
  return json(200, {
    [dialect.undocumentedLists]: page.map((grid) => gridJson(grid, dialect.gridListFields)),
    next_cursor: nextCursorOf('grids', end < grids.length ? end : null, context),
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
  const context = listContext(ctx);
  const columns = selectColumns(grid.columns, ctx.query.get('columns'));
  const q = readListQuery(ctx.query, list, LIST_LIMITS.grid_rows, { updated_after: 'datetime', columns: 'string' }, context, 'grid_rows');
  if (isReply(q)) {
    if (q.status !== 422 || !isErrors(columns)) return q;
    return invalid([...((q.body as { detail: ValidationError[] }).detail), ...columns]);
  }
  if (isErrors(columns)) return invalid(columns);
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
    const out: Record<string, string | number | null> = {};
    for (const column of columns) out[column.name] = row.cells[column.name] ?? null;
    data.push(out);
    lastId = n;
  }
  return json(200, { grid_id: grid.grid_id, columns, data, next_cursor: nextCursorOf(list, more ? lastId : null, context) });
}

function isErrors(value: readonly GridColumn[] | ValidationError[]): value is ValidationError[] {
  return value.length > 0 && 'loc' in value[0]!;
}

export function addGridRoutes(router: Router<ApiContext>): void {
  router.add('GET', '/v1/grids', 'none', listGrids).add('GET', '/v1/grids/:grid_id/rows', 'none', gridRows);
}
