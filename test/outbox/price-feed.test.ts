import { describe, expect, it } from 'vitest';
import { sqlRun } from '../support/state-sql.ts';
import { outboxStats } from '../../src/store/outbox-stats.ts';
import { ackConsumer, listConsumers, maxSeq, readFeed } from '../../src/store/price-feed.ts';
import { markAcknowledged, markConflicts } from '../../src/store/acknowledgements.ts';
import { recordWithdrawal } from '../../src/store/approved-prices.ts';
import { STORE_A, approval, deliver, fixedClock, openTempDb } from './support.ts';

const error = (code: string) => expect.objectContaining({ code }) as Error;

describe('the price feed', () => {
  it('pages by seq > last in seq order, with the columns a POS needs', async () => {
    const db = await openTempDb();
    expect(await maxSeq(db)).toBe(0);
    await deliver(db, [1, 2, 3].map((id) => approval(id, { store_id: STORE_A })));
    await deliver(db, [approval(4, { predecessor_id: 2, approved_price: '12.00' }), approval(5, { store_id: null })]);
    expect((await readFeed(db, 0, 2)).map((r) => r.seq)).toEqual([1, 2]);
    expect((await readFeed(db, 2)).map((r) => r.seq)).toEqual([3, 4, 5]);
    expect(await readFeed(db, 5)).toEqual([]);
    expect((await readFeed(db, 3, 1))[0]).toEqual({
      seq: 4,
      kind: 'price',
      approval_id: 4,
      predecessor_id: 2,
      item_id: 'ITEM-4',
      sku: 'SKU-4',
      store_id: 'b3a1c2d4-0000-4000-8000-000000000001',
      approved_price: '12.00',
      currency_code: 'EUR',
      effective_date: '2026-11-01',
      recorded_at: expect.any(String) as string,
    });
    await expect(readFeed(db, -1)).rejects.toThrow(error('INVALID_ARGUMENT'));
    await expect(readFeed(db, 0, 0)).rejects.toThrow(error('INVALID_ARGUMENT'));
    await expect(sqlRun(db, `UPDATE price_feed SET approved_price = '0' WHERE seq = 1`)).rejects.toThrow(/append-only/);
    await expect(sqlRun(db, 'DELETE FROM price_feed')).rejects.toThrow(/append-only/);
  });
});

describe('consumer offsets', () => {
  it('records offsets within the feed, never backwards unless forced, and reports the lag', async () => {
    const clock = fixedClock();
    const db = await openTempDb({ now: clock.now });
    await expect(ackConsumer(db, 'pos-1', 1)).rejects.toThrow(error('SEQ_BEYOND_FEED'));
    await deliver(db, [1, 2, 3, 4, 5].map((id) => approval(id)));

    expect(await ackConsumer(db, 'pos-1', 3)).toEqual({
      consumer: 'pos-1',
      last_seq: 3,
      updated_at: '2026-11-22T10:00:00.000Z',
      lag: 2,
    });
    await ackConsumer(db, 'pos-2', 5);
    await ackConsumer(db, 'pos-2', 5); // same offset again: fine
    await expect(ackConsumer(db, 'pos-1', 6)).rejects.toThrow(error('SEQ_BEYOND_FEED'));
    await expect(ackConsumer(db, 'pos-1', 2)).rejects.toThrow(error('OFFSET_BACKWARDS'));
    await expect(ackConsumer(db, ' ', 2)).rejects.toThrow(error('INVALID_ARGUMENT'));
    expect((await ackConsumer(db, 'pos-2', 1, { force: true })).last_seq).toBe(1);

    await deliver(db, [approval(6)]);
    expect(await listConsumers(db)).toEqual([
      { consumer: 'pos-2', last_seq: 1, updated_at: '2026-11-22T10:00:00.000Z', lag: 5 },
      { consumer: 'pos-1', last_seq: 3, updated_at: '2026-11-22T10:00:00.000Z', lag: 3 },
    ]);
    // A POS writing its offset with SQL is held to the same rule by a trigger.
    await expect(sqlRun(db, `INSERT INTO consumer_offsets VALUES ('pos-3', 99, 'x')`)).rejects.toThrow(/beyond the last seq/);
  });
});

describe('outboxStats', () => {
  it('summarises feed, acknowledgements, intents, consumers and exports', async () => {
    const db = await openTempDb();
    const empty = await outboxStats(db);
    expect(empty).toMatchObject({ max_seq: 0, feed_rows: 0, consumers: 0, max_consumer_lag: null, export_stores: 0 });
    expect(empty.database_id).toMatch(/^[0-9a-f-]{36}$/);

    await deliver(db, [1, 2, 3, 4].map((id) => approval(id)));
    await markAcknowledged(db, [1, 2]);
    await markConflicts(db, [{ id: 3, reason: 'cancelled' }]);
    await recordWithdrawal(db, approval(3, { cancelled_at: '2026-11-21T00:00:00Z' }));
    await recordWithdrawal(db, approval(9, { cancelled_at: '2026-11-21T00:00:00Z' }));
    await ackConsumer(db, 'pos-1', 2);
    expect(await outboxStats(db)).toMatchObject({
      max_seq: 6,
      feed_rows: 6,
      withdrawals: 2,
      approvals: { total: 5, ack_pending: 1, acknowledged: 2, conflict: 1, not_delivered: 1 },
      oldest_ack_pending_received_at: expect.any(String) as string,
      pending_delivery_intents: 0,
      consumers: 1,
      max_consumer_lag: 4,
      exported_up_to_seq: null,
    });
  });
});
