/**
 * The sandbox's dialects (docs/sandbox.md, "Dialects"): each choice of the table, on the wire, per dialect. The
 * agent's side of each choice is tested in test/regressions and in the end-to-end suites run over every dialect.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS, DIALECT_NAMES, type DialectName } from '../../src/sandbox/index.ts';
import { firstError, open, type Harness } from './support.ts';

let h: Harness;
afterEach(() => h.close());

const start = async (dialect: DialectName, approvals = 0) => {
  h = await open({ dialect, approvals });
  return h;
};

describe('acknowledge', () => {
  const bodies = { approval_ids: (ids: number[]) => ({ approval_ids: ids }), ids: (ids: number[]) => ({ ids }), array: (ids: number[]) => ids };

  it.each(DIALECT_NAMES)('%s: takes exactly its body shapes; answers success in its own form', async (name) => {
    const { client } = await start(name, 19);
    const dialect = DIALECTS[name];
    let next = 1;
    for (const [shape, body] of Object.entries(bodies)) {
      const res = await client.post('/v1/approved_prices/acknowledge', body([next]));
      const accepted = (dialect.ackRequest as readonly string[]).includes(shape);
      expect(res.status, `${name} ${shape}`).toBe(accepted ? (dialect.ackSuccess === 'none' ? 204 : 200) : 422);
      if (accepted) next += 1;
    }
    const shape = dialect.ackRequest[0]!;
    const fresh = await client.post('/v1/approved_prices/acknowledge', bodies[shape]([10, 11]));
    const again = await client.post('/v1/approved_prices/acknowledge', bodies[shape]([11, 12]));
    const expected = {
      ids: [{ acknowledged: [10, 11] }, 409],
      none: [undefined, 409],
      changed: [{ acknowledged: [10, 11] }, { acknowledged: [12] }],
      counts: [{ acknowledged: 2, already_acknowledged: 0 }, { acknowledged: 1, already_acknowledged: 1 }],
    }[dialect.ackSuccess];
    expect(fresh.body).toEqual(expected[0]);
    if (expected[1] === 409) expect(again.status).toBe(409);
    else expect(again.body).toEqual(expected[1]);
    const acks = new Map(h.sandbox.control.state().approvals.acks.map((a) => [a.id, a]));
    expect(acks.get(11)?.ack_count).toBe(1);
    expect(dialect.ackRepeat === 'accept' ? acks.get(11)?.repeat_acks : acks.get(11)?.conflicting_acks).toBe(1);
  });

  it.each(DIALECT_NAMES)('%s: a conflicting batch is a 409 in the dialect’s shape; an unknown id per ackUnknownId', async (name) => {
    const { client, sandbox } = await start(name, 19);
    const dialect = DIALECTS[name];
    const body = (ids: number[]) => bodies[dialect.ackRequest[0]!](ids);
    sandbox.control.cancel(3);
    const refused = await client.post('/v1/approved_prices/acknowledge', body([2, 3]));
    expect(refused.status).toBe(409);
    if (dialect.ackConflictBody === 'conflicts') {
      expect(refused.body).toMatchObject({ detail: { conflicts: [{ id: 3, reason: 'cancelled' }] } });
    } else if (dialect.ackConflictBody === 'ids') {
      expect(refused.body).toMatchObject({ conflicting_ids: [3] });
    } else {
      expect(refused.body).toEqual({ detail: expect.any(String) as unknown });
    }
    const unknown = await client.post('/v1/approved_prices/acknowledge', body([2, 999]));
    expect(unknown.status).toBe(dialect.ackUnknownId === 'validation' ? 422 : 409);
    if (dialect.ackUnknownId === 'validation') expect(firstError(unknown.body).loc.at(-1)).toBe(1);
    // A pending approval, never delivered, can be acknowledged directly (the document's state table).
    expect((await client.post('/v1/approved_prices/acknowledge', body([2]))).status).toBeLessThan(300);
  });
});

describe('deliveries', () => {
  it('strict: exactly once, request_ids and cursors expire (409 and 410)', async () => {
    const { client, clock } = await start('strict', 19);
    const first = await client.post('/v1/approved_prices/deliveries', { request_id: crypto.randomUUID(), pagination: { limit: 10 } });
    const page = first.body as { items: { id: number }[]; next_cursor: string };
    expect(page.items.map((a) => a.id)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    // A fresh delivery from the start does not hand out the delivered rows again.
    const fresh = await client.post('/v1/approved_prices/deliveries', { request_id: crypto.randomUUID(), pagination: { limit: 10 } });
    expect((fresh.body as { items: { id: number }[] }).items[0]?.id).toBe(11);
    const requestId = crypto.randomUUID();
    expect((await client.post('/v1/approved_prices/deliveries', { request_id: requestId })).status).toBe(200);
    await clock.advance(DIALECTS.strict.expiryMs! + 1);
    expect((await client.post('/v1/approved_prices/deliveries', { request_id: requestId })).status).toBe(409);
    const old = await client.post('/v1/approved_prices/deliveries', { request_id: crypto.randomUUID(), pagination: { cursor: page.next_cursor } });
    expect(old.status).toBe(410);
    expect((await client.get(`/v1/products?cursor=${page.next_cursor}`)).status).toBe(422); // another list's cursor
  });

  it('lenient: a delivery that does not say history=false delivers the history', async () => {
    const { client, sandbox } = await start('lenient', 19);
    sandbox.control.cancel(1);
    const implicit = await client.post('/v1/approved_prices/deliveries', { request_id: crypto.randomUUID(), pagination: { limit: 500 } });
    expect((implicit.body as { items: unknown[] }).items).toHaveLength(19);
    expect(sandbox.control.state().approvals.exported_api).toBe(0);
    const explicit = await client.post('/v1/approved_prices/deliveries', {
      request_id: crypto.randomUUID(),
      filters: { history: false },
      pagination: { limit: 500 },
    });
    expect((explicit.body as { items: unknown[] }).items).toHaveLength(18);
  });
});

describe('reads', () => {
  it('terse: nulls left out, offset timestamps without fractions, undocumented lists under data, no ids in the last cursor', async () => {
    const { client } = await start('terse', 40);
    const delivery = await client.post('/v1/approved_prices/deliveries', { request_id: crypto.randomUUID(), pagination: { limit: 500 } });
    const items = (delivery.body as { items: Record<string, unknown>[] }).items;
    expect(Object.keys(delivery.body as object)).toEqual(['items']); // next_cursor null: left out
    const productLevel = items.find((a) => !('store_id' in a));
    expect(productLevel).toBeDefined();
    expect(items[0]?.approved_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
    await client.post('/v1/products/bulk', { items: [{ item_id: 'A', sku: 'A', Farbe: 'rot' }] });
    const products = await client.get('/v1/products');
    expect(Object.keys(products.body as object)).toEqual(['data']);
    expect((products.body as { data: Record<string, unknown>[] }).data[0]).not.toHaveProperty('Farbe'); // dropped
    expect(Object.keys((await client.get('/v1/grids')).body as object)).toEqual(['data']);
    const verify = (await client.get('/v1/auth/verify')).body as { user_id: string };
    expect(verify.user_id[19]).toBe('c'); // UUID-shaped, not RFC 4122
  });

  it('lenient: an empty last cursor, microsecond offsets, grids named in its own words', async () => {
    const { client } = await start('lenient');
    const grids = (await client.get('/v1/grids')).body as { items: Record<string, unknown>[]; next_cursor: string };
    expect(grids.next_cursor).toBe('');
    expect(Object.keys(grids.items[0]!).sort()).toEqual(['column_summary', 'id', 'rows', 'title']);
    await client.post('/v1/products/bulk', { items: [{ item_id: 'A', sku: 'A' }] });
    const product = ((await client.get('/v1/products')).body as { items: { updated_at: string }[] }).items[0];
    expect(product?.updated_at).toMatch(/\.\d{6}\+00:00$/);
  });

  it('strict: refuses query parameters the document does not define and product fields beyond it', async () => {
    const { client } = await start('strict');
    expect(firstError((await client.get('/v1/competitor_prices?updated_after=2026-01-01T00:00:00Z')).body)).toMatchObject({
      loc: ['query', 'updated_after'],
      type: 'extra_forbidden',
    });
    expect((await client.get('/v1/products?updated_after=2026-01-01T00:00:00Z')).status).toBe(200);
    const bulk = (await client.post('/v1/products/bulk', { items: [{ item_id: 'A', sku: 'A', Farbe: 'rot' }, { item_id: 'B', sku: 'B' }] }))
      .body as { results: { ok: boolean; code?: string }[] };
    expect(bulk.results.map((r) => r.ok)).toEqual([false, true]);
  });
});

describe('jobs', () => {
  const csv = (lines: string[]) => `item_id,store_id,current_price\n${lines.join('\n')}\n`;

  it.each(DIALECT_NAMES)('%s: an import with a refused row', async (name) => {
    const { client, sandbox } = await start(name);
    const [a, b] = sandbox.control.stores;
    const upload = await client.upload('product_store', csv([`X-1,${a!},1.00`, 'X-2,not-a-store,2.00', `X-3,${b!},3.00`]));
    const jobId = (upload.body as { job_id: string }).job_id;
    let job: Record<string, unknown> = {};
    for (let i = 0; i < 50 && !['completed', 'failed', 'done', 'error'].includes(String(job.status)); i += 1) {
      await new Promise((resolve) => setImmediate(resolve));
      job = (await client.get(`/v1/jobs/${jobId}`)).body as Record<string, unknown>;
    }
    const written = (sandbox.control.state().product_store.keys ?? []).filter((k) => k.item_id.startsWith('X-')).length;
    switch (DIALECTS[name].jobRowErrors) {
      case 'completed':
        expect(job).toMatchObject({ status: 'completed', rows_failed: 1, errors: [{ line: 3, code: 'unknown_store' }] });
        expect(written).toBe(2);
        break;
      case 'none':
        expect(Object.keys(job).sort()).toEqual(['created_at', 'job_id', 'job_type', 'progress', 'started_at', 'status']);
        expect(job.status).toBe('failed');
        expect(written).toBe(0);
        break;
      case 'rows':
        expect(job).toMatchObject({ status: 'failed', failed_rows: [{ row: 2 }] });
        expect(written).toBe(0);
        break;
      case 'sample':
        expect(job).toMatchObject({ status: 'error', failed_count: 1, sample: [{ line: 3 }] });
        expect(written).toBe(0);
        break;
    }
  });
});
