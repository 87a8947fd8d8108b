/**
 * Competitor prices through the client: the non-idempotent single create (201, a new row every time), bulk (200,
 * idempotent per business key), PATCH and DELETE on integer ids, the cursor list, and a CSV import. Reads carry the
 * spec's read fields; effective_price is write-side only.
 */
import { describe, expect, it } from 'vitest';
import { API_ERROR_CODES } from '../../src/api/errors.ts';
import { CompetitorPrice, CompetitorPricePage, type CompetitorPriceWrite } from '../../src/api/schemas/index.ts';
import { allPages, contractForFile, errorOf, ownedOperationsTest, pagedThrough, pollJob } from './support.ts';

const h = contractForFile('competitor-prices');

const READ_FIELDS = [
  'id',
  'competitor_name',
  'observed_at',
  'regular_price',
  'item_id',
  'promo_price',
  'currency',
  'source_url',
  'competitor_sku',
  'barcode',
  'status',
  'stock_on_hand',
  'created_at',
  'updated_at',
];

const price = (over: Partial<CompetitorPriceWrite> = {}): CompetitorPriceWrite => ({
  competitor_name: 'MegaMart',
  observed_at: '2026-11-20T09:00:00Z',
  regular_price: '4.99',
  effective_price: '4.49',
  item_id: 'I-1',
  competitor_sku: 'MM-1',
  currency: 'EUR',
  ...over,
});

describe('competitorPrices.create', () => {
  it('answers 201 with an integer id and the read fields; the same body again is a second row', async () => {
    const first = await h.client.competitorPrices.create(price());
    expect(h.lastStatus('competitorPrices.create')).toBe(201);
    expect(CompetitorPrice.parse(first)).toMatchObject({ competitor_name: 'MegaMart', regular_price: '4.99', item_id: 'I-1' });
    expect(Number.isInteger(first.id)).toBe(true);
    expect(Object.keys(first).sort()).toEqual([...READ_FIELDS].sort());
    const second = await h.client.competitorPrices.create(price());
    expect(second.id).not.toBe(first.id);
    expect(h.sandbox.control.state({ keys: false }).competitor_prices).toMatchObject({ count: 2, single_creates: 2 });
  });

  it('refuses a body without effective_price locally (the sandbox would answer missing)', async () => {
    const { effective_price: _omitted, ...body } = price();
    const before = h.responseCount();
    const error = await errorOf(() => h.client.competitorPrices.create(body as CompetitorPriceWrite));
    expect(error.code).toBe(API_ERROR_CODES.localValidation);
    expect(h.responseCount()).toBe(before);
    const raw = await h.raw('POST', '/v1/competitor_prices', JSON.stringify(body));
    expect(raw).toEqual({ status: 422, body: { detail: [expect.objectContaining({ loc: ['body', 'effective_price'], type: 'missing' })] } });
  });
});

describe('competitorPrices.bulk', () => {
  it('answers 200 with per-row results and is idempotent on (competitor_name, item_id, competitor_sku, observed_at)', async () => {
    const items = [
      price({ competitor_name: 'ValueShop', competitor_sku: 'VS-1' }),
      price({ competitor_name: 'ValueShop', competitor_sku: 'VS-2', item_id: 'I-2', promo_price: '3.99' }),
      price({ competitor_name: 'ValueShop', competitor_sku: 'VS-3', item_id: 'I-3', regular_price: '1,50' }),
    ];
    const first = await h.client.competitorPrices.bulk(items);
    expect(h.lastStatus('competitorPrices.bulk')).toBe(200);
    expect(first.results.map((r) => [r.index, r.ok, r.code ?? null])).toEqual([
      [0, true, null],
      [1, true, null],
      [2, false, 'validation_error'],
    ]);
    expect(first.results.slice(0, 2).every((r) => Number.isInteger(r.id))).toBe(true);
    // The same observation again (observed_at compared as an instant) updates the same rows.
    const again = await h.client.competitorPrices.bulk([{ ...items[0]!, observed_at: '2026-11-20T10:00:00+01:00', regular_price: '5.09' }]);
    expect(again.results[0]?.id).toBe(first.results[0]?.id);
  });
});

describe('competitorPrices.patch and competitorPrices.delete', () => {
  it('patches by integer id (200); 404 for an unknown id', async () => {
    const created = await h.client.competitorPrices.create(price({ competitor_name: 'Corner', competitor_sku: 'C-1' }));
    const patched = await h.client.competitorPrices.patch(created.id, { promo_price: '3.49', status: 'in_stock' });
    expect(h.lastStatus('competitorPrices.patch')).toBe(200);
    expect(patched).toMatchObject({ id: created.id, promo_price: '3.49', status: 'in_stock', regular_price: '4.99' });
    const error = await errorOf(() => h.client.competitorPrices.patch(987_654, { status: 'x' }));
    expect(error).toMatchObject({ code: API_ERROR_CODES.notFound, status: 404, operation: 'competitorPrices.patch' });
  });

  it('deletes with 204, and 204 again once gone; a non-integer id is 422 from the sandbox', async () => {
    const created = await h.client.competitorPrices.create(price({ competitor_name: 'Gone', competitor_sku: 'G-1' }));
    await h.client.competitorPrices.delete(created.id);
    await h.client.competitorPrices.delete(created.id);
    expect(h.statuses.get('competitorPrices.delete')).toEqual([204, 204]);
    const raw = await h.raw('DELETE', '/v1/competitor_prices/abc');
    expect(raw).toEqual({ status: 422, body: { detail: [expect.objectContaining({ loc: ['path', 'entity_id'], type: 'int_parsing' })] } });
  });
});

describe('competitorPrices.list', () => {
  it('pages {items, next_cursor} with limit and cursor and filters by competitor_name and item_id', async () => {
    const { rows } = await pagedThrough(h, 'competitorPrices.list', h.client.competitorPrices.list({ limit: 2 }));
    expect(rows).toHaveLength(h.sandbox.control.state({ keys: false }).competitor_prices.count);
    for (const row of rows) expect(row).not.toHaveProperty('effective_price');
    const valueShop = (await allPages(h.client.competitorPrices.list({ competitor_name: 'ValueShop' }))).flatMap((p) => p.items);
    // Order is the sandbox's (last update last); the spec shows none, so compare as a set.
    expect(valueShop.map((r) => [r.competitor_sku, r.regular_price]).sort()).toEqual([
      ['VS-1', '5.09'],
      ['VS-2', '4.99'],
    ]);
    const i2 = (await allPages(h.client.competitorPrices.list({ item_id: 'I-2' }))).flatMap((p) => p.items);
    expect(i2.map((r) => r.competitor_sku)).toEqual(['VS-2']);
    const raw = await h.raw('GET', '/v1/competitor_prices?limit=1');
    expect(Object.keys(CompetitorPricePage.parse(raw.body)).sort()).toEqual(['items', 'next_cursor']);
  });
});

describe('competitorPrices.import', () => {
  it('answers 202; the job completes and the rows land in the same store (bulk key)', async () => {
    const csv = [
      'competitor_name,observed_at,regular_price,effective_price,item_id,competitor_sku',
      'ValueShop,2026-11-20T09:00:00Z,5.19,4.49,I-1,VS-1',
      'Discounter,2026-11-21T09:00:00Z,2.00,1.80,I-4,D-4',
    ].join('\n');
    const handle = await h.client.competitorPrices.import(await h.csv('competitor_prices.csv', `${csv}\n`));
    expect(h.lastStatus('competitorPrices.import')).toBe(202);
    const job = await pollJob(h, handle.job_id);
    expect(job).toMatchObject({ status: 'completed', job_type: 'import_competitor_prices', rows_ok: 2, rows_failed: 0 });
    const valueShop = (await allPages(h.client.competitorPrices.list({ competitor_name: 'ValueShop', item_id: 'I-1' }))).flatMap((p) => p.items);
    expect(valueShop).toEqual([expect.objectContaining({ competitor_sku: 'VS-1', regular_price: '5.19' })]);
  });

  it('refuses a file with no header row (first line blank) with 422', async () => {
    const error = await errorOf(async () => h.client.competitorPrices.import(await h.csv('blank.csv', '\nValueShop,2026-11-20T09:00:00Z,1,1\n')));
    expect(error).toMatchObject({ code: API_ERROR_CODES.validation, status: 422 });
    expect(error.detail).toEqual([expect.objectContaining({ loc: ['body', 'file'], msg: expect.stringContaining('no header row') as unknown })]);
  });
});

ownedOperationsTest(() => h);
