/** Grids: user-built workspaces with canonical, custom and formula columns. */
import { z } from 'zod';
import { isoDateTime, nextCursor } from './common.ts';

export const GridColumn = z.looseObject({ name: z.string(), type: z.string(), source: z.string() });
export type GridColumn = z.infer<typeof GridColumn>;

/** A grid in the list: the spec shows a column-schema summary and a row count; the rest is tolerated. */
export const Grid = z.looseObject({
  grid_id: z.string(),
  name: z.string().optional(),
  columns: z.array(GridColumn),
  row_count: z.number().int().nonnegative(),
  updated_at: isoDateTime.optional(),
});
export type Grid = z.infer<typeof Grid>;

export const GridPage = z.looseObject({ items: z.array(Grid), next_cursor: nextCursor });
export type GridPage = z.infer<typeof GridPage>;

/**
 * One grid row keyed by column name; numeric values are strings. Our documented choice (docs/sandbox.md): every
 * row also carries `grid_item_id` and `updated_at`, whatever `columns` selects, so that rows can be upserted by id
 * and synced with `updated_after`.
 */
export const GridRow = z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]));
export type GridRow = z.infer<typeof GridRow>;

export const GridRowsPage = z.looseObject({
  grid_id: z.string(),
  columns: z.array(GridColumn),
  data: z.array(GridRow),
  next_cursor: nextCursor,
});
export type GridRowsPage = z.infer<typeof GridRowsPage>;
