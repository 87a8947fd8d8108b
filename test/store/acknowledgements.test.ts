import { describe, expect, it } from 'vitest';
import { idsToAcknowledge, markAcknowledged, markConflicts } from '../../src/store/acknowledgements.ts';
import { getApprovedPrice, recordWithdrawal, storeDeliveredPage } from '../../src/store/approved-prices.ts';
import { recordDeliveryIntent } from '../../src/store/delivery-intents.ts';
import { approval, fixedClock, openTempDb } from './support.ts';

describe('acknowledgements', () => {
  it('hands out pending ids in batches, marks each once, and records conflicts with their reason', async () => {
    const clock = fixedClock();
    const db = await openTempDb({ now: clock.now });
    const requestId = '44444444-4444-4444-8444-444444444444';
    const intent = recordDeliveryIntent(db, { requestId, filters: {}, cursor: null });
    storeDeliveredPage(db, intent.id, [5, 3, 9, 1].map((id) => approval(id)), null);
    recordWithdrawal(db, approval(20, { cancelled_at: '2026-11-21T09:00:00Z' })); // not delivered: never acknowledged

    expect(idsToAcknowledge(db, 2)).toEqual([1, 3]);
    expect(idsToAcknowledge(db)).toEqual([1, 3, 5, 9]);
    clock.advance(1000);
    expect(markAcknowledged(db, [1, 3])).toBe(2);
    expect(markAcknowledged(db, [1, 3])).toBe(0); // an id is acknowledged once
    expect(getApprovedPrice(db, 1)).toMatchObject({ ack_status: 'acknowledged', acked_at: '2026-11-22T10:00:01.000Z' });

    expect(markConflicts(db, [{ id: 9, reason: 'cancelled' }, { id: 1, reason: 'superseded' }])).toBe(1);
    expect(getApprovedPrice(db, 9)).toMatchObject({ ack_status: 'conflict', conflict_reason: 'cancelled' });
    expect(getApprovedPrice(db, 1)?.ack_status).toBe('acknowledged');
    expect(idsToAcknowledge(db)).toEqual([5]);

    expect(() => idsToAcknowledge(db, 501)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }) as Error);
    expect(() => markConflicts(db, [{ id: 5, reason: '' }])).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }) as Error,
    );
    expect(getApprovedPrice(db, 5)?.ack_status).toBe('pending'); // the failed batch changed nothing
  });
});
