import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HTTPValidationError, Job, JobHandle, ProductPage } from '../../src/api/schemas/index.ts';
import { firstError, open, type Harness } from './support.ts';

const PACE = { queuedMs: 5_000, tickMs: 1_000, rowsPerTick: 2 };

describe('CSV imports: the four 422s', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await open();
  });
  afterAll(async () => {
    await h.close();
  });

  it.each([
    ['no file part', null, 'missing'],
    ['an empty file', '', 'value_error'],
    ['a byte-order mark only', '\uFEFF', 'value_error'],
    ['a file that is not UTF-8', Buffer.from([0x69, 0x74, 0x65, 0x6d, 0x0a, 0xff, 0xfe, 0x41]), 'value_error'],
    ['a truncated UTF-8 sequence at the end', Buffer.from([0x61, 0x0a, 0xc3]), 'value_error'],
    ['no header row', '\n\nitem_id,sku\nA,B\n', 'value_error'],
    ['a whitespace-only first line', '   \r\nA,B\n', 'value_error'],
  ] as const)('refuses %s with 422 on body.file', async (_name, csv, type) => {
    const res = await h.client.upload('products', csv);
    expect(res.status).toBe(422);
    const error = HTTPValidationError.parse(res.body).detail[0]!;
    expect(error).toMatchObject({ loc: ['body', 'file'], type });
  });

  it('refuses a part with another name and a request that is not multipart', async () => {
    expect(firstError((await h.client.upload('products', 'item_id,sku\nA,B\n', 'upload')).body).type).toBe('missing');
    const plain = await h.client.post('/v1/imports/products', { file: 'item_id,sku' });
    expect(plain.status).toBe(422);
    expect(firstError(plain.body)).toMatchObject({ loc: ['body', 'file'], type: 'missing' });
  });

  it('answers 404 for an unknown import entity and for unknown jobs, 422 for a non-UUID job id', async () => {
    expect((await h.client.upload('product_variants', 'a\n1\n')).status).toBe(404);
    expect((await h.client.get('/v1/jobs/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect(firstError((await h.client.get('/v1/jobs/42')).body)).toMatchObject({ loc: ['path', 'job_id'] });
  });
});

describe('CSV imports: job lifecycle at a paced clock', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await open({ jobPace: PACE });
  });
  afterAll(async () => {
    await h.close();
  });

  async function job(id: string): Promise<Job> {
    const res = await h.client.get(`/v1/jobs/${id}`);
    expect(res.status).toBe(200);
    return Job.parse(res.body);
  }

  it('goes queued -> running (with progress) -> completed; rows land in the same store as bulk rows', async () => {
    const csv = 'item_id,sku,brand,Season,Shelf\nA-1,S-1,Nordhof,winter,\nA-2,S-2,,summer,top\nA-3,S-3,,,\nA-4,S-4,,,\nA-5,S-5,,,\n';
    const res = await h.client.upload('products', csv);
    expect(res.status).toBe(202);
    const { job_id: id } = JobHandle.parse(res.body);
    expect(await job(id)).toMatchObject({ status: 'queued', progress: 0, job_type: 'import_products', started_at: null });
    await h.clock.advance(PACE.queuedMs);
    const running = await job(id);
    expect(running.status).toBe('running');
    expect(running.started_at).toBe(new Date(h.clock.now()).toISOString());
    expect(running.rows_ok).toBe(2);
    expect(running.progress).toBeGreaterThan(0);
    expect(running.progress).toBeLessThan(100);
    await h.clock.advance(PACE.tickMs);
    await h.clock.advance(PACE.tickMs);
    const done = await job(id);
    expect(done).toMatchObject({ status: 'completed', progress: 100, rows_total: 5, rows_ok: 5, rows_failed: 0, error: null, errors: [] });
    const products = ProductPage.parse((await h.client.get('/v1/products')).body).items;
    expect(products.find((p) => p.item_id === 'A-1')).toMatchObject({ brand: 'Nordhof', Season: 'winter' });
    expect(products.find((p) => p.item_id === 'A-1')).not.toHaveProperty('Shelf'); // an empty cell sets nothing
    expect(products.find((p) => p.item_id === 'A-2')).toMatchObject({ Season: 'summer', Shelf: 'top' });
  });

  it('completes with row errors (line numbers, codes) for bad rows', async () => {
    const stores = h.sandbox.control.stores;
    const csv = [
      'item_id,store_id,current_price,stock_on_hand',
      `X,${stores[0]},1.50,3`,
      `X,${stores[0]},1.60,3`,
      `Y,nowhere,1.00,1`,
      `Z,${stores[1]},1;00,1`,
      `W,${stores[1]}`,
      `V,${stores[2]},"2.00",many`,
    ].join('\r\n');
    const { job_id: id } = JobHandle.parse((await h.client.upload('product_store', csv)).body);
    await h.clock.advance(PACE.queuedMs + 10 * PACE.tickMs);
    const done = await job(id);
    expect(done).toMatchObject({ status: 'completed', rows_total: 6, rows_ok: 1, rows_failed: 5 });
    expect(done.errors!.map((e) => [e.line, e.code])).toEqual([
      [3, 'duplicate_key'],
      [4, 'unknown_store'],
      [5, 'validation_error'],
      [6, 'column_count'],
      [7, 'validation_error'],
    ]);
    expect(done.errors![2]!.message).toContain('current_price');
  });

  it('fails before writing anything when a required column is missing or a column is unknown', async () => {
    const before = h.sandbox.control.state().transactions.count;
    const missing = JobHandle.parse((await h.client.upload('transactions', 'transaction_id,item_id\nT,I\n')).body);
    const unknown = JobHandle.parse(
      (await h.client.upload('transactions', 'transaction_id,item_id,transaction_timestamp,colour\nT,I,2026-11-01T00:00:00Z,red\n')).body,
    );
    const blank = JobHandle.parse((await h.client.upload('transactions', 'transaction_id, ,item_id,transaction_timestamp\nT,x,I,2026-11-01T00:00:00Z\n')).body);
    await h.clock.advance(PACE.queuedMs);
    expect(await job(blank.job_id)).toMatchObject({ status: 'failed', error: 'the header has a blank column name' });
    expect(await job(missing.job_id)).toMatchObject({ status: 'failed', error: 'missing required column(s): transaction_timestamp' });
    expect(await job(unknown.job_id)).toMatchObject({ status: 'failed', error: 'unknown column(s): colour' });
    expect((await job(unknown.job_id)).finished_at).toBe(new Date(h.clock.now()).toISOString());
    expect(h.sandbox.control.state().transactions.count).toBe(before);
  });

  it('fails on a CSV syntax error, naming it', async () => {
    const csv = 'competitor_name,observed_at,regular_price,effective_price\nM,2026-11-01T00:00:00Z,1,1\n"M,2026-11-01T00:00:00Z,1,1\n';
    const { job_id: id } = JobHandle.parse((await h.client.upload('competitor_prices', csv)).body);
    await h.clock.advance(PACE.queuedMs + PACE.tickMs);
    const failed = await job(id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/^CSV error/);
  });
});
