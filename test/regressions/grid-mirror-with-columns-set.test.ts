/**
 * Regression (issue 11, failure 4): a grid mirror with `columns:` set failed with "grid row without an integer
 * grid_item_id". The document says a grid row is keyed by column name, nothing more; the mirror relied on a
 * grid_item_id and an updated_at the sandbox added to every row. The sandbox no longer does (in any dialect), and
 * the mirror asks for those columns when the grid has them, or reads the grid whole as a snapshot keyed by row
 * number when it has not.
 */
import { afterEach, expect, it } from 'vitest';
import { sqlRows, sqlRun } from '../support/state-sql.ts';
import { runMirror } from '../../src/pull/mirrors.ts';
import { streamState } from '../../src/store/mirrors.ts';
import { MirrorConfigSchema } from '../pull/mirror-config.ts';
import { pullHarness, type PullHarness } from '../pull/support.ts';

let h: PullHarness;
afterEach(() => h.close());

const gridNamed = (name: string) => {
  const grid = h.sandbox.control.world.grids.grids.find((g) => g.name === name);
  if (!grid) throw new Error(`no grid ${name}`);
  return grid;
};

const rowsOf = (gridId: string) =>
  sqlRows<{ grid_item_id: number; record: string }>(h.db, 'SELECT grid_item_id, record FROM mirror_grid_rows WHERE grid_id = ? ORDER BY grid_item_id', [gridId]);

it('mirrors a grid with columns set: keyed by its grid_item_id column when it has one, by row number when not', async () => {
  h = await pullHarness();
  const weekly = gridNamed('Weekly price review'); // has grid_item_id and updated_at columns
  const promo = gridNamed('Promo planning'); // has neither
  const config = MirrorConfigSchema.parse({ stream: 'grids', grid_ids: [weekly.grid_id, promo.grid_id], columns: ['item_id', 'current_price'] });

  const first = await runMirror(h.deps, config);
  expect(first.map((r) => [r.rows, r.error])).toEqual([
    [250, null],
    [1200, null],
  ]);
  const weeklyRows = await rowsOf(weekly.grid_id);
  expect(weeklyRows).toHaveLength(250);
  expect(Object.keys(JSON.parse(weeklyRows[6]!.record) as object)).toEqual(['item_id', 'current_price', 'grid_item_id', 'updated_at']);
  expect(weeklyRows[6]?.grid_item_id).toBe(7);
  const promoRows = await rowsOf(promo.grid_id);
  expect(promoRows.map((r) => r.grid_item_id)).toEqual(Array.from({ length: 1200 }, (_, i) => i + 1));
  expect(JSON.parse(promoRows[0]!.record)).toEqual({ item_id: 'ITM-000001', current_price: expect.any(String) as unknown });

  // The next run: the keyed grid reads what changed since its watermark; the snapshot is read whole again and
  // replaces the rows (no updated_after: its rows carry no time).
  const second = await runMirror(h.deps, config);
  expect(second[0]?.updatedAfter).toBe((await streamState(h.db, `grid:${weekly.grid_id}`))?.watermark);
  expect(second[0]!.rows).toBeLessThan(250);
  expect(second[1]).toMatchObject({ rows: 1200, updatedAfter: null });
  expect(await rowsOf(promo.grid_id)).toHaveLength(1200);
});

it('a snapshot replaces the rows of an earlier listing, also when the grid shrank or was keyed another way', async () => {
  h = await pullHarness();
  const promo = gridNamed('Promo planning');
  // Rows an earlier listing stored: keyed by an id the grid does not show now, and past the grid's end.
  await sqlRun(h.db, `INSERT INTO mirror_grid_rows (grid_id, grid_item_id, updated_at, record, synced_at) VALUES (?, ?, NULL, ?, 'x')`, [
    promo.grid_id,
    5000,
    JSON.stringify({ grid_item_id: 5000, item_id: 'GONE' }),
  ]);
  await runMirror(h.deps, MirrorConfigSchema.parse({ stream: 'grids', grid_ids: [promo.grid_id], columns: ['item_id'] }));
  const rows = await rowsOf(promo.grid_id);
  expect(rows).toHaveLength(1200);
  expect(rows.some((r) => r.record.includes('GONE'))).toBe(false);
});
