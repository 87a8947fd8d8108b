/**
 * Mirrors against the sandbox: rows updated between runs arrive, boundary rows (updated_after is inclusive) are
 * read again but stored once, an interrupted listing resumes from its cursor, grids are paged by size with a
 * column selection, and the JSON Lines export holds every row of a listing.
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { sqlValue } from '../support/state-sql.ts';
import { ApiClient } from '../../src/api/client.ts';
import { runMirror } from '../../src/pull/mirrors.ts';
import { streamState, upsertMirrorPage } from '../../src/store/mirrors.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { MirrorConfigSchema } from './mirror-config.ts';
import { pullHarness, type PullHarness } from './support.ts';

let h: PullHarness;
afterEach(() => h.close());

const sandboxClock = () => new ManualClock(Date.parse('2026-11-22T10:00:00Z'));

async function addProducts(count: number, from = 0): Promise<string[]> {
  const items = Array.from({ length: count }, (_, i) => ({
    item_id: `P-${String(from + i).padStart(4, '0')}`,
    sku: `S-${from + i}`,
    product_name: `Product ${from + i}`,
    Farbe: i % 2 === 0 ? 'rot' : 'blau',
  }));
  const result = await h.client.products.bulk(items);
  return result.results.map((r) => String(r.id));
}

async function count(table: string): Promise<number> {
  return (await sqlValue<number>(h.db, `SELECT count(*) FROM ${table}`)) ?? 0;
}

describe('runMirror', () => {
  it('brings rows updated between runs, reads the boundary rows again and stores them once', async () => {
    const clock = sandboxClock();
    h = await pullHarness({ sandbox: { clock } });
    const ids = await addProducts(30);
    await clock.advance(1000);
    await addProducts(5, 30); // the newest updated_at: the watermark after the first run
    const config = MirrorConfigSchema.parse({ stream: 'products', page_size: 10 });

    const [first] = await runMirror(h.deps, config);
    expect(first).toMatchObject({ pages: 4, rows: 35, updatedAfter: null, watermark: '2026-11-22T10:00:01.000Z' });
    expect(await count('mirror_products')).toBe(35);
    const record = await sqlValue<string>(h.db, `SELECT record FROM mirror_products WHERE item_id = 'P-0000'`);
    expect(JSON.parse(record ?? '{}')).toMatchObject({ product_name: 'Product 0', Farbe: 'rot' }); // custom column kept

    await clock.advance(1000);
    await h.client.products.patch(ids[3] ?? '', { product_name: 'Renamed' });
    await addProducts(2, 100);
    const [second] = await runMirror(h.deps, config);
    // 5 boundary rows (updated_after is inclusive) + 1 updated + 2 new; stored by id, so no duplicate.
    expect(second).toMatchObject({ rows: 8, updatedAfter: '2026-11-22T10:00:01.000Z', watermark: '2026-11-22T10:00:02.000Z' });
    expect(await count('mirror_products')).toBe(37);
    const renamed = await sqlValue<string>(h.db, `SELECT record FROM mirror_products WHERE id = ?`, [ids[3] ?? '']);
    expect(JSON.parse(renamed ?? '{}')).toMatchObject({ product_name: 'Renamed' });
  });

  it('resumes an interrupted listing from its stored cursor, with the watermark it started with', async () => {
    h = await pullHarness({ sandbox: { clock: sandboxClock() } });
    await addProducts(45);
    const config = MirrorConfigSchema.parse({ stream: 'products', page_size: 10, export: join(h.dir, 'exports') });
    // A client that stops the run after the second page has been fetched (as SIGTERM would).
    const stop = new AbortController();
    let responses = 0;
    const dispatcher = new Agent({ allowH2: false });
    const client = new ApiClient({
      baseUrl: h.sandbox.url,
      apiKey: h.sandbox.apiKey,
      dispatcher,
      hooks: { onResponse: () => (++responses === 2 ? stop.abort(new Error('stop')) : undefined) },
    });
    await expect(runMirror({ ...h.deps, client }, config, stop.signal)).rejects.toThrow('stop');
    await dispatcher.close();
    const interrupted = await streamState(h.db, 'products');
    expect(interrupted).toMatchObject({ listing_rows: 20, watermark: null });
    expect(interrupted?.cursor).not.toBeNull();

    const [resumed] = await runMirror(h.deps, config);
    expect(resumed).toMatchObject({ resumed: true, pages: 3, rows: 25 });
    expect(await count('mirror_products')).toBe(45);
    expect(await streamState(h.db, 'products')).toMatchObject({ cursor: null, listing_started_at: null, listing_rows: 0 });
    // The export of the listing holds all of its rows, those of the interrupted run included.
    const lines = (await readFile(resumed?.exportFile ?? '', 'utf8')).trim().split('\n');
    expect(new Set(lines.map((l) => (JSON.parse(l) as { item_id: string }).item_id)).size).toBe(45);
    expect((await readdir(join(h.dir, 'exports', 'products'))).filter((f) => f.startsWith('.'))).toEqual([]);
  });

  it('completes a listing whose last page was committed before a crash, without reading again', async () => {
    h = await pullHarness({ sandbox: { clock: sandboxClock() } });
    await upsertMirrorPage(h.db, 'products', [{ id: 'x-1', item_id: 'X', updated_at: '2026-11-20T08:00:00Z' }], null);
    const [run] = await runMirror(h.deps, MirrorConfigSchema.parse({ stream: 'products' }));
    expect(run).toMatchObject({ pages: 0, rows: 0, watermark: '2026-11-20T08:00:00Z' });
    expect(h.sandbox.control.state().requests.total).toBe(0);
  });

  it('pages a grid above 50,000 rows by 5000 with the selected columns, and small grids with the default', async () => {
    h = await pullHarness({ sandbox: { largeGridRows: 60_000 } });
    const grids = h.sandbox.control.world.grids.grids;
    const large = grids.find((g) => g.row_count === 60_000);
    const small = grids.find((g) => g.row_count === 250);
    if (!large || !small) throw new Error('seeded grids changed');
    const config = MirrorConfigSchema.parse({
      stream: 'grids',
      grid_ids: [large.grid_id, small.grid_id],
      columns: ['item_id', 'current_price'],
    });
    const runs = await runMirror(h.deps, config);
    expect(runs.map((r) => [r.stream, r.pages, r.rows])).toEqual([
      [`grid:${large.grid_id}`, 12, 60_000],
      [`grid:${small.grid_id}`, 1, 250],
    ]);
    const row = await sqlValue<string>(h.db, 'SELECT record FROM mirror_grid_rows WHERE grid_id = ? AND grid_item_id = 7', [small.grid_id]);
    expect(Object.keys(JSON.parse(row ?? '{}') as object).sort()).toEqual(['current_price', 'grid_item_id', 'item_id', 'updated_at']);

    // Nothing changed: the next listing reads only the rows at the watermark, and stores no duplicate.
    const again = await runMirror(h.deps, MirrorConfigSchema.parse({ stream: 'grids', grid_ids: [small.grid_id], columns: ['item_id'] }));
    expect(again[0]?.rows).toBeGreaterThan(0);
    expect(again[0]?.rows).toBeLessThan(5);
    expect(await count('mirror_grid_rows')).toBe(60_250);
  });
});
