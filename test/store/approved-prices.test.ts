import { describe, expect, it } from 'vitest';
import { sqlRow, sqlRows, sqlValue } from '../support/state-sql.ts';
import type { ApprovedPrice } from '../../src/api/schemas/index.ts';
import { getAckState } from '../../src/store/acknowledgements.ts';
import {
  currentPricesAt,
  getApprovedPrice,
  recordWithdrawal,
  storeDeliveredPage,
} from '../../src/store/approved-prices.ts';
import {
  abandonDeliveryIntent,
  pendingDeliveryIntent,
  pullCursor,
  recordDeliveryIntent,
} from '../../src/store/delivery-intents.ts';
import type { StateDb } from '../../src/store/state-db.ts';
import { approval, openTempDb } from './support.ts';

let requests = 0;

/** Records an intent and stores `items` as its page, as the pull does. */
async function deliver(db: StateDb, items: ApprovedPrice[], nextCursor: string | null = null) {
  requests += 1;
  const intent = await recordDeliveryIntent(db, {
    requestId: `00000000-0000-4000-8000-${String(requests).padStart(12, '0')}`,
    filters: {},
    cursor: await pullCursor(db),
  });
  return await storeDeliveredPage(db, intent.id, items, nextCursor);
}

async function feed(db: StateDb) {
  return await sqlRows(db, 'SELECT seq, kind, approval_id, approved_price FROM price_feed ORDER BY seq');
}

describe('delivery intents', () => {
  it('persists the request for replay, one pending intent per job, the cursor moving with the page', async () => {
    const db = await openTempDb();
    const intent = await recordDeliveryIntent(db, {
      requestId: '11111111-1111-4111-8111-111111111111',
      filters: { store_id: 'b3a1c2d4-0000-4000-8000-000000000001', effective_after: '2026-11-01' },
      cursor: 'c-0',
      limit: 500,
    });
    expect(await pendingDeliveryIntent(db)).toEqual(intent);
    expect(intent).toMatchObject({ status: 'pending', cursor: 'c-0', page_limit: 500, job: 'approved_prices' });
    expect(intent.filters).toEqual({ store_id: 'b3a1c2d4-0000-4000-8000-000000000001', effective_after: '2026-11-01' });
    await expect(
      recordDeliveryIntent(db, { requestId: '22222222-2222-4222-8222-222222222222', filters: {}, cursor: 'c-0' }),
    ).rejects.toThrow(expect.objectContaining({ code: 'INTENT_PENDING' }) as Error);

    await storeDeliveredPage(db, intent.id, [approval(1)], 'c-1');
    expect(await pendingDeliveryIntent(db)).toBeUndefined();
    expect(await pullCursor(db)).toBe('c-1');
    const done = await sqlRow(db, 'SELECT status, next_cursor, row_count, done_at FROM delivery_intents');
    expect(done).toMatchObject({ status: 'done', next_cursor: 'c-1', row_count: 1 });
    await expect(storeDeliveredPage(db, intent.id, [approval(2)], 'c-2')).rejects.toThrow(
      expect.objectContaining({ code: 'INTENT_NOT_PENDING' }) as Error,
    );
    expect(await getApprovedPrice(db, 2)).toBeUndefined();
  });

  it('an intent whose replay the server refuses can be abandoned; the cursor stays', async () => {
    const db = await openTempDb();
    await deliver(db, [approval(1)], 'c-1');
    const requestId = '55555555-5555-4555-8555-555555555555';
    const stuck = await recordDeliveryIntent(db, { requestId, filters: {}, cursor: 'c-1' });
    await abandonDeliveryIntent(db, stuck.id);
    expect(await pendingDeliveryIntent(db)).toBeUndefined();
    expect(await pullCursor(db)).toBe('c-1');
    const notPending = expect.objectContaining({ code: 'INTENT_NOT_PENDING' }) as Error;
    await expect(abandonDeliveryIntent(db, stuck.id)).rejects.toThrow(notPending);
    await expect(storeDeliveredPage(db, stuck.id, [approval(2)], 'c-2')).rejects.toThrow(notPending);
    const nextId = '66666666-6666-4666-8666-666666666666';
    const next = await recordDeliveryIntent(db, { requestId: nextId, filters: {}, cursor: 'c-1' });
    expect(next.status).toBe('pending');
  });
});

describe('storeDeliveredPage', () => {
  it('stores every field, trace and approval_details as JSON, and a price feed row per new version', async () => {
    const db = await openTempDb();
    const result = await deliver(db, [approval(1), approval(2, { store_id: null })], 'next');
    expect(result).toEqual({ inserted: 2, insertedIds: [1, 2], duplicates: 0, feedRows: 2, lastSeq: 2 });
    const stored = await getApprovedPrice(db, 1);
    expect(stored).toMatchObject({ approved_price: '10.49', intent_id: 1, cancelled_at: null });
    expect(await getAckState(db, 1)).toEqual({ status: 'pending', conflict_reason: null, acked_at: null });
    expect(JSON.parse(stored?.trace ?? '')).toEqual(approval(1).trace);
    expect(JSON.parse(stored?.approval_details ?? '')).toEqual(approval(1).approval_details);
    expect(JSON.parse(stored?.record ?? '')).toEqual(approval(1));
    expect(await feed(db)).toEqual([
      { seq: 1, kind: 'price', approval_id: 1, approved_price: '10.49' },
      { seq: 2, kind: 'price', approval_id: 2, approved_price: '10.49' },
    ]);
  });

  it('trace and approval_details read as the JSON text of the record\'s field (null when absent or null) on both backends', async () => {
    // SQLite computes them from the record when read; PostgreSQL stores what the agent fills in (migration 0011).
    const odd = { note: 'Preis "neu"\n\u20ac \u00fc \u2028 \\', numbers: [1.5, 1e21, -0.25, 0, 12345678901234], empty: {}, none: [] };
    const page = [
      approval(1, { trace: [odd, { payload: null }], approval_details: { margin_pct: '21.5', nested: odd } }),
      approval(2, { trace: null, approval_details: undefined }),
      approval(3, { trace: [] , approval_details: {} }),
    ];
    const db = await openTempDb();
    await deliver(db, page);
    await recordWithdrawal(db, approval(4, { cancelled_at: '2026-11-21T09:00:00Z', trace: [odd] }));
    expect(await sqlRows(db, 'SELECT id, trace, approval_details FROM approved_prices ORDER BY id')).toEqual([
      { id: 1, trace: JSON.stringify([odd, { payload: null }]), approval_details: JSON.stringify({ margin_pct: '21.5', nested: odd }) },
      { id: 2, trace: null, approval_details: null },
      { id: 3, trace: '[]', approval_details: '{}' },
      { id: 4, trace: JSON.stringify([odd]), approval_details: JSON.stringify(approval(4).approval_details) },
    ]);
  });

  it('a replayed page stores nothing twice and appends no feed row', async () => {
    const db = await openTempDb();
    const page = [approval(1), approval(2), approval(3)];
    await deliver(db, page, 'c-1');
    const replay = await deliver(db, page, 'c-1');
    expect(replay).toEqual({ inserted: 0, insertedIds: [], duplicates: 3, feedRows: 0, lastSeq: null });
    expect(await feed(db)).toHaveLength(3);
    expect(await sqlValue(db, 'SELECT count(*) FROM approved_prices')).toBe(3);
  });

  it('stores nothing of a page that fails half-way: intent still pending, cursor unchanged', async () => {
    const db = await openTempDb();
    await deliver(db, [approval(1)], 'c-1');
    const intent = await recordDeliveryIntent(db, {
      requestId: '33333333-3333-4333-8333-333333333333',
      filters: {},
      cursor: 'c-1',
    });
    const broken = { ...approval(3), grid_item_id: 'not-an-integer' } as unknown as ApprovedPrice;
    await expect(storeDeliveredPage(db, intent.id, [approval(2), broken], 'c-2')).rejects.toThrow();
    expect(await getApprovedPrice(db, 2)).toBeUndefined();
    expect(await feed(db)).toHaveLength(1);
    expect(await pullCursor(db)).toBe('c-1');
    expect((await pendingDeliveryIntent(db))?.id).toBe(intent.id);
  });
});

describe('versions and current prices', () => {
  const store = 'b3a1c2d4-0000-4000-8000-000000000001';
  const base = { item_id: 'A', sku: 'A-1', store_id: store, effective_date: '2026-11-01' };

  it('an amendment supersedes its predecessor, in whichever order they arrive', async () => {
    for (const order of ['predecessor first', 'amendment first']) {
      const db = await openTempDb();
      const original = approval(1, { ...base, approved_price: '10.00' });
      const amendment = approval(2, {
        ...base,
        approved_price: '11.00',
        approved_at: '2026-10-31T08:00:00Z',
        predecessor_id: 1,
        amendment_reason: 'typo',
      });
      if (order === 'predecessor first') {
        await deliver(db, [original]);
        await deliver(db, [amendment]);
      } else {
        await deliver(db, [amendment]);
        await deliver(db, [original]);
      }
      const current = await currentPricesAt(db, '2026-11-22');
      expect(current, order).toEqual([
        expect.objectContaining({ item_id: 'A', approved_price: '11.00', approval_id: 2, predecessor_id: 1 }),
      ]);
    }
  });

  it('an amendment dated in the future also retires its predecessor now; the version before it applies', async () => {
    const db = await openTempDb();
    await deliver(db, [
      approval(1, { ...base, approved_price: '9.00', effective_date: '2026-10-01' }),
      approval(2, { ...base, approved_price: '10.00' }),
      approval(3, { ...base, approved_price: '12.00', effective_date: '2026-12-01', predecessor_id: 2 }),
    ]);
    expect((await currentPricesAt(db, '2026-11-22'))[0]?.approved_price).toBe('9.00');
    expect((await currentPricesAt(db, '2026-12-01'))[0]?.approved_price).toBe('12.00');
  });

  it('a future-dated price waits for its date; a missing effective_date means the approval date', async () => {
    const db = await openTempDb();
    await deliver(db, [
      approval(1, { ...base, approved_price: '10.00' }),
      approval(2, { ...base, approved_price: '12.00', effective_date: '2026-12-01' }),
      approval(3, {
        ...base,
        item_id: 'B',
        approved_price: '5.00',
        effective_date: null,
        approved_at: '2026-11-20T23:30:00Z',
      }),
    ]);
    expect((await currentPricesAt(db, '2026-11-22')).map((p) => [p.item_id, p.approved_price, p.effective_date])).toEqual([
      ['A', '10.00', '2026-11-01'],
      ['B', '5.00', '2026-11-20'],
    ]);
    expect((await currentPricesAt(db, '2026-11-19')).map((p) => p.item_id)).toEqual(['A']);
    expect((await currentPricesAt(db, '2026-12-01')).find((p) => p.item_id === 'A')?.approved_price).toBe('12.00');
  });

  it('a cancelled version withdraws its price once, whether delivered cancelled or recorded from history', async () => {
    const db = await openTempDb();
    await deliver(db, [
      approval(1, { ...base, approved_price: '9.00', effective_date: '2026-10-01' }),
      approval(2, { ...base, approved_price: '10.00' }),
    ]);
    expect((await currentPricesAt(db, '2026-11-22'))[0]?.approved_price).toBe('10.00');

    const cancelled = approval(2, { ...base, approved_price: '10.00', cancelled_at: '2026-11-21T09:00:00Z' });
    const page = await deliver(db, [cancelled]);
    expect(page).toMatchObject({ inserted: 0, duplicates: 1, feedRows: 1 });
    expect(await recordWithdrawal(db, cancelled)).toBeNull();
    await deliver(db, [cancelled]);
    expect((await feed(db)).map((r) => (r as { kind: string }).kind)).toEqual(['price', 'price', 'withdrawal']);
    expect((await getApprovedPrice(db, 2))?.cancelled_at).toBe('2026-11-21T09:00:00Z');
    expect((await currentPricesAt(db, '2026-11-22'))[0]?.approved_price).toBe('9.00');

    // Never received, seen cancelled in a history read: stored, nothing to acknowledge, one withdrawal row.
    const unseen = approval(7, { ...base, cancelled_at: '2026-11-21T10:00:00Z' });
    expect(await recordWithdrawal(db, unseen)).toBe(4);
    expect(await getApprovedPrice(db, 7)).toMatchObject({ intent_id: null });
    expect(await getAckState(db, 7)).toBeUndefined();
    const notCancelled = expect.objectContaining({ code: 'NOT_CANCELLED' }) as Error;
    await expect(recordWithdrawal(db, approval(8))).rejects.toThrow(notCancelled);
  });

  it('a version delivered already cancelled gets only a withdrawal row', async () => {
    const db = await openTempDb();
    await deliver(db, [approval(1, { cancelled_at: '2026-11-21T09:00:00Z' })]);
    expect(await feed(db)).toEqual([{ seq: 1, kind: 'withdrawal', approval_id: 1, approved_price: '10.49' }]);
  });

  it('product-level rows (store_id null) have their own key, store_key _all', async () => {
    const db = await openTempDb();
    await deliver(db, [
      approval(1, { ...base, store_id: null, approved_price: '8.00' }),
      approval(2, { ...base, approved_price: '10.00' }),
      approval(3, { ...base, store_id: null, approved_price: '8.50', effective_date: '2026-11-10' }),
    ]);
    expect((await currentPricesAt(db, '2026-11-22')).map((p) => [p.store_id, p.store_key, p.approved_price])).toEqual([
      [null, '_all', '8.50'],
      [store, store, '10.00'],
    ]);
  });

  it('the current_prices view gives what currentPricesAt gives for the local date today', async () => {
    const db = await openTempDb();
    const now = new Date();
    const pad = (n: number) => String(n).padStart(2, '0');
    const today = `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
    await deliver(db, [
      approval(1, { ...base, effective_date: '2000-01-01' }),
      approval(2, { ...base, effective_date: today, approved_price: '2.00' }),
      approval(3, { ...base, effective_date: '2999-01-01', approved_price: '3.00' }),
      approval(4, { ...base, store_id: null, effective_date: '2000-01-01' }),
    ]);
    const view = await sqlRows(db, 'SELECT * FROM current_prices ORDER BY item_id, store_key');
    expect(view).toEqual(await currentPricesAt(db, today));
    expect(view).toHaveLength(2);
    expect(view[1]).toMatchObject({ approval_id: 2, approved_price: '2.00' });
  });
});
