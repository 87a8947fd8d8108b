/** Grids: user-built workspaces with canonical, custom and formula columns. */
import { z } from 'zod';
import { nextCursor } from './common.ts';
import { listPage } from './envelopes.ts';

/** A column of the schema summary or of a rows response; type and source are kept when sent. */
export const GridColumn = z.looseObject({ name: z.string(), type: z.string().optional(), source: z.string().optional() });
export type GridColumn = z.infer<typeof GridColumn>;

/**
 * A grid in the list. The document shows a column-schema summary and a row count and nothing else, not even the
 * name of the id field: `grid_id` or `id` is read as the grid's id; `columns` (the summary as a list of columns)
 * and `row_count` are used when they are there, and the agent works without them (docs/api-assumptions.md).
 */
export const Grid = z
  .looseObject({
    grid_id: z.string().optional(),
    id: z.string().optional(),
    name: z.string().nullish(),
    columns: z.array(GridColumn).optional().catch(undefined),
    row_count: z.number().int().nonnegative().optional().catch(undefined),
  })
  .refine((grid) => (grid.grid_id ?? grid.id) !== undefined, { error: 'a grid without grid_id or id', path: ['grid_id'] })
  .transform((grid) => ({ ...grid, grid_id: grid.grid_id ?? grid.id ?? '' }));
export type Grid = z.infer<typeof Grid>;

/** The grids list: its body is not shown; rows under `items` or `data`. */
export const GridPage = listPage(Grid);
export type GridPage = z.infer<typeof GridPage>;

/**
 * One grid row: keyed by column name and nothing more (the document). A row carries `grid_item_id` or
 * `updated_at` only when the grid has columns of those names; numeric values are strings.
 */
export const GridRow = z.record(z.string(), z.unknown());
export type GridRow = z.infer<typeof GridRow>;

export const GridRowsPage = z.looseObject({
  grid_id: z.string().optional(),
  columns: z.array(GridColumn).optional(),
  data: z.array(GridRow),
  next_cursor: nextCursor,
});
export type GridRowsPage = z.infer<typeof GridRowsPage>;
