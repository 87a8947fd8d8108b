import { afterEach, describe, expect, it } from 'vitest';
import { BulkResponse, GridPage } from '../../src/api/schemas/index.ts';
import { open, type Harness } from './support.ts';

const opened: Harness[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((h) => h.close()));
});

async function snapshot(seed: number) {
  const h = await open({ seed, approvals: 50 });
  opened.push(h);
  const approvals = await h.client.get('/v1/approved_prices?history=true&limit=500');
  const grids = GridPage.parse((await h.client.get('/v1/grids')).body);
  const rows = await h.client.get(`/v1/grids/${grids.items[0]!.grid_id}/rows?limit=20`);
  const bulk = BulkResponse.parse(
    (
      await h.client.post('/v1/products/bulk', {
        items: [
          { item_id: 'A', sku: 'A' },
          { item_id: 'B', sku: 'B' },
        ],
      })
    ).body,
  );
  const state = h.sandbox.control.state();
  return {
    key: h.sandbox.apiKey,
    rotated: h.sandbox.control.rotateKey(),
    stores: state.stores,
    user: state.user_id,
    exports: state.exports,
    approvals: approvals.text,
    grids: grids.items,
    rows: rows.text,
    ids: bulk.results.map((r) => r.id),
  };
}

describe('determinism', () => {
  it('gives the same data, ids and keys for the same seed', async () => {
    const [a, b] = [await snapshot(7), await snapshot(7)];
    expect(a).toEqual(b);
  });

  it('gives different data for another seed', async () => {
    const [a, b] = [await snapshot(7), await snapshot(8)];
    expect(a.key).not.toBe(b.key);
    expect(a.stores).not.toEqual(b.stores);
    expect(a.approvals).not.toBe(b.approvals);
    expect(a.ids).not.toEqual(b.ids);
  });
});
