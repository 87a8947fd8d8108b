/**
 * Regression (issue 11, of the same kind): the grids mirror needed `grid_id`, a `columns` list and a `row_count` in
 * the grids list; the document shows only "a column-schema summary and a row count", not their names, and a server
 * that names them otherwise failed every grid mirror. A grid's id is now read from `grid_id` or `id`; without
 * column names the grid is read whole as a snapshot. Dialect: lenient (`id`, `column_summary`, `rows`).
 */
import { afterEach, expect, it } from 'vitest';
import { runMirror } from '../../src/pull/mirrors.ts';
import { MirrorConfigSchema } from '../pull/mirror-config.ts';
import { pullHarness, type PullHarness } from '../pull/support.ts';
import { sqlValue } from '../support/state-sql.ts';

let h: PullHarness;
afterEach(() => h.close());

it('mirrors every grid of a list whose fields have other names', async () => {
  h = await pullHarness({ sandbox: { dialect: 'lenient' } });
  const runs = await runMirror(h.deps, MirrorConfigSchema.parse({ stream: 'grids' }));
  const grids = h.sandbox.control.world.grids.grids;
  expect(runs.map((r) => [r.stream, r.rows, r.error])).toEqual(grids.map((g) => [`grid:${g.grid_id}`, g.row_count, null]));
  expect((await sqlValue<number>(h.db, 'SELECT count(*) FROM mirror_grid_rows'))).toBe(grids.reduce((n, g) => n + g.row_count, 0));
});
