/**
 * Grids through the client: the list (column-schema summary and row count per grid, cursor paging) and the rows
 * endpoint with `columns`, `updated_after`, `limit` (max 10000) and cursor paging. The seeded grids have canonical,
 * custom and formula columns of types string, number and single_select.
 */
import { describe, expect, it } from 'vitest';
import { API_ERROR_CODES } from '../../src/api/errors.ts';
import type { GridRowsQuery } from '../../src/api/resources/grids.ts';
import type { Grid, GridColumn, GridRow } from '../../src/api/schemas/index.ts';
import { allPages, contractForFile, errorOf, ownedOperationsTest, uuidOf } from './support.ts';

const h = contractForFile('grids');
let grids: Grid[];
/** A seeded grid as the list shows it; the sandbox's default dialect sends its columns and row count. */
const byName = (name: string): Grid & { columns: GridColumn[]; row_count: number } => {
  const grid = grids.find((g) => g.name === name);
  if (!grid?.columns || grid.row_count === undefined) throw new Error(`no seeded grid named ${name}`);
  return { ...grid, columns: grid.columns, row_count: grid.row_count };
};

async function rowsOf(gridId: string, q: GridRowsQuery = {}) {
  const pages = await allPages(h.client.grids.rows(gridId, q));
  return { pages, rows: pages.flatMap((p) => p.items) };
}

describe('grids.list', () => {
  it('pages the grids with limit and cursor; each has a column-schema summary and a row count', async () => {
    const pages = await allPages(h.client.grids.list({ limit: 1 }));
    expect(h.lastStatus('grids.list')).toBe(200);
    expect(pages.map((p) => p.items.length)).toEqual([1, 1, 1]);
    expect(pages.map((p) => p.nextCursor === null)).toEqual([false, false, true]);
    grids = pages.flatMap((p) => p.items);
    expect(new Set(grids.map((g) => g.grid_id)).size).toBe(3);
    for (const grid of grids) {
      expect(Number.isInteger(grid.row_count)).toBe(true);
      expect(grid.columns?.length).toBeGreaterThan(0);
    }
    const columns = grids.flatMap((g) => g.columns ?? []);
    expect(new Set(columns.map((c) => c.source))).toEqual(new Set(['canonical', 'custom', 'formula']));
    expect(new Set(columns.map((c) => c.type))).toEqual(new Set(['string', 'number', 'single_select']));
  });
});

describe('grids.rows', () => {
  it('returns every column by default, one object per row keyed by column name, numbers as strings', async () => {
    const grid = byName('Competitive watch');
    const { pages, rows } = await rowsOf(grid.grid_id);
    expect(h.lastStatus('grids.rows')).toBe(200);
    expect(pages).toHaveLength(1);
    expect(pages[0]).toMatchObject({ gridId: grid.grid_id, columns: grid.columns, nextCursor: null });
    expect(rows).toHaveLength(grid.row_count);
    const numeric = grid.columns.filter((c) => c.type === 'number').map((c) => c.name);
    expect(numeric.length).toBeGreaterThan(0);
    for (const row of rows) {
      // Keyed by column name and nothing else (the document); this grid has no grid_item_id or updated_at column.
      expect(Object.keys(row)).toEqual(grid.columns.map((c) => c.name));
      for (const name of numeric) expect(typeof row[name]).toBe('string');
    }
  });

  it('returns only the selected columns, in the order asked, names with spaces and symbols included', async () => {
    const grid = byName('Weekly price review');
    const { pages, rows } = await rowsOf(grid.grid_id, { columns: ['Margin %', 'item_id', 'Price Zone'], limit: 50 });
    expect(pages[0]?.columns?.map((c) => [c.name, c.source])).toEqual([
      ['Margin %', 'formula'],
      ['item_id', 'canonical'],
      ['Price Zone', 'custom'],
    ]);
    expect(rows).toHaveLength(grid.row_count);
    for (const row of rows) expect(Object.keys(row)).toEqual(['Margin %', 'item_id', 'Price Zone']);
  });

  it('pages with limit and cursor: every row once, in row order', async () => {
    const grid = byName('Promo planning');
    const { pages, rows } = await rowsOf(grid.grid_id, { limit: 500, columns: ['item_id'] });
    expect(pages.map((p) => p.items.length)).toEqual([500, 500, 200]);
    expect(pages.map((p) => p.nextCursor === null)).toEqual([false, false, true]);
    expect(rows.map((r) => Number(String(r.item_id).slice(4)))).toEqual(Array.from({ length: grid.row_count }, (_, i) => i + 1));
  });

  it('resumes from a stored cursor', async () => {
    const grid = byName('Promo planning');
    const first = (await allPages(h.client.grids.rows(grid.grid_id, { limit: 1000, columns: ['sku'] })))[0];
    const rest = await rowsOf(grid.grid_id, { limit: 1000, columns: ['sku'], cursor: first?.nextCursor ?? '' });
    expect(rest.rows.map((r) => Number(r.sku) - 100_000)).toEqual(Array.from({ length: 200 }, (_, i) => 1001 + i));
  });

  it('filters with updated_after: exactly the rows updated at or after it', async () => {
    const grid = byName('Weekly price review'); // has canonical columns grid_item_id and updated_at
    const all = (await rowsOf(grid.grid_id, { columns: ['grid_item_id', 'updated_at'] })).rows;
    const times = all.map((r: GridRow) => String(r.updated_at)).sort();
    const since = times[Math.floor(times.length / 2)] ?? '';
    const { rows } = await rowsOf(grid.grid_id, { columns: ['grid_item_id'], updated_after: since, limit: 40 });
    const expected = all.filter((r) => Date.parse(String(r.updated_at)) >= Date.parse(since)).map((r) => r.grid_item_id);
    expect(rows.map((r) => r.grid_item_id)).toEqual(expected);
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(all.length);
  });

  it('accepts limit 10000 and refuses 10001 locally, before sending', async () => {
    const grid = byName('Promo planning');
    const { pages } = await rowsOf(grid.grid_id, { limit: 10_000, columns: ['item_id'] });
    expect(pages).toHaveLength(1);
    const before = h.responseCount();
    const error = await errorOf(() => h.client.grids.rows(grid.grid_id, { limit: 10_001 }));
    expect(error.code).toBe(API_ERROR_CODES.localValidation);
    expect(h.responseCount()).toBe(before);
  });

  it('answers 422 on query.columns for a column the grid does not have, and 404 for an unknown grid', async () => {
    const grid = byName('Competitive watch');
    const invalid = await errorOf(() => rowsOf(grid.grid_id, { columns: ['item_id', 'Nope'] }));
    expect(invalid).toMatchObject({ code: API_ERROR_CODES.validation, status: 422, operation: 'grids.rows' });
    expect(invalid.detail).toEqual([expect.objectContaining({ loc: ['query', 'columns'], type: 'value_error', msg: expect.stringContaining('Nope') as unknown })]);
    const missing = await errorOf(() => rowsOf(uuidOf(1)));
    expect(missing).toMatchObject({ code: API_ERROR_CODES.notFound, status: 404 });
  });
});

ownedOperationsTest(() => h);
