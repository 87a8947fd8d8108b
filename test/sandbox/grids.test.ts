import { beforeAll, describe, expect, it } from 'vitest';
import { GRID_LARGE_PAGE_SIZE, GridPage, GridRowsPage, type Grid } from '../../src/api/schemas/index.ts';
import { cursorParam, everyPage, firstError, sandboxForFile } from './support.ts';

let grids: Grid[];
const h = sandboxForFile({ largeGridRows: 60_000 });
beforeAll(async () => {
  grids = GridPage.parse((await h.client.get('/v1/grids')).body).items;
});

const rowsOf = async (query: string) => {
  const res = await h.client.get(query);
  expect(res.status).toBe(200);
  return GridRowsPage.parse(res.body);
};

describe('grids', () => {
  it('lists grids with a column-schema summary, a row count and canonical, custom and formula columns', () => {
    expect(grids.map((g) => [g.name, g.row_count])).toEqual([
      ['Weekly price review', 250],
      ['Promo planning', 1200],
      ['Competitive watch', 40],
      ['Full assortment', 60_000],
    ]);
    const columns = grids.flatMap((g) => g.columns ?? []);
    expect(new Set(columns.map((c) => c.source))).toEqual(new Set(['canonical', 'custom', 'formula']));
    expect(new Set(columns.map((c) => c.type))).toEqual(new Set(['string', 'number', 'single_select']));
  });

  it('pages the grid list with a cursor', async () => {
    const first = GridPage.parse((await h.client.get('/v1/grids?limit=3')).body);
    expect(first.items).toHaveLength(3);
    const second = GridPage.parse((await h.client.get(`/v1/grids?limit=3&cursor=${first.next_cursor!}`)).body);
    expect(second.items.map((g) => g.name)).toEqual(['Full assortment']);
    expect(second.next_cursor).toBeNull();
  });

  it('returns rows keyed by the selected column names and nothing else, numbers as strings', async () => {
    const grid = grids[0]!;
    const page = await rowsOf(`/v1/grids/${grid.grid_id}/rows?limit=2&columns=${encodeURIComponent('sku,Margin %')}`);
    expect(page.columns?.map((c) => c.name)).toEqual(['sku', 'Margin %']);
    expect(page.data).toHaveLength(2);
    for (const row of page.data) {
      expect(Object.keys(row)).toEqual(['sku', 'Margin %']);
      expect(row['Margin %']).toMatch(/^-?\d+\.\d\d$/);
    }
    // This grid has canonical columns named grid_item_id (the row number, as a string) and updated_at.
    const all = await rowsOf(`/v1/grids/${grid.grid_id}/rows?limit=1`);
    expect(Object.keys(all.data[0]!)).toEqual(grid.columns?.map((c) => c.name));
    expect(all.data[0]).toMatchObject({ grid_item_id: '1', updated_at: expect.stringMatching(/Z$/) as unknown });
    const other = grids[1]!;
    expect(other.columns?.map((c) => c.name)).not.toContain('grid_item_id');
  });

  it('pages the large grid with limit 5000 without a gap or a repeat', async () => {
    const grid = grids[3]!;
    const pages = await everyPage((cursor) => rowsOf(`/v1/grids/${grid.grid_id}/rows?limit=${GRID_LARGE_PAGE_SIZE}&columns=grid_item_id${cursorParam(cursor)}`));
    const seen = new Set(pages.flatMap((page) => page.data.map((row) => Number(row.grid_item_id))));
    expect(pages).toHaveLength(12);
    expect(seen.size).toBe(60_000);
  });

  it('filters rows by updated_after (inclusive)', async () => {
    const grid = grids[0]!;
    const all = (await rowsOf(`/v1/grids/${grid.grid_id}/rows?limit=10000`)).data;
    const times = all.map((r) => r.updated_at as string).sort();
    const median = times[Math.floor(times.length / 2)]!;
    const recent = (await rowsOf(`/v1/grids/${grid.grid_id}/rows?limit=10000&updated_after=${median}`)).data;
    expect(recent.length).toBe(times.filter((t) => t >= median).length);
    expect(recent.every((r) => (r.updated_at as string) >= median)).toBe(true);
  });

  it('refuses unknown columns and limits out of range; an unknown grid is 404', async () => {
    const grid = grids[0]!;
    expect(firstError((await h.client.get(`/v1/grids/${grid.grid_id}/rows?columns=nope`)).body)).toMatchObject({
      loc: ['query', 'columns'],
      type: 'value_error',
    });
    expect(firstError((await h.client.get(`/v1/grids/${grid.grid_id}/rows?limit=10001`)).body).loc).toEqual(['query', 'limit']);
    expect((await h.client.get('/v1/grids/unknown-grid/rows')).status).toBe(404);
  });
});
