import { describe, expect, it } from 'vitest';
import { getAckState, idsToAcknowledge, markAcknowledged, markConflicts } from '../../src/store/acknowledgements.ts';
import { recordWithdrawal, storeDeliveredPage } from '../../src/store/approved-prices.ts';
import { recordDeliveryIntent } from '../../src/store/delivery-intents.ts';
import { approval, fixedClock, openTempDb } from './support.ts';

describe('acknowledgements', () => {
  it('hands out pending ids in batches, marks each once, and records conflicts with their reason', async () => {
    const clock = fixedClock();
    const db = await openTempDb({ now: clock.now });
    const requestId = '44444444-4444-4444-8444-444444444444';
    const intent = await recordDeliveryIntent(db, { requestId, filters: {}, cursor: null });
    await storeDeliveredPage(db, intent.id, [5, 3, 9, 1].map((id) => approval(id)), null);
    await recordWithdrawal(db, approval(20, { cancelled_at: '2026-11-21T09:00:00Z' })); // not delivered: never acknowledged

    expect(await idsToAcknowledge(db, 2)).toEqual([1, 3]);
    expect(await idsToAcknowledge(db)).toEqual([1, 3, 5, 9]);
    clock.advance(1000);
    expect(await markAcknowledged(db, [1, 3])).toBe(2);
    expect(await markAcknowledged(db, [1, 3])).toBe(0); // an id is acknowledged once
    expect(await getAckState(db, 1)).toEqual({ status: 'acknowledged', conflict_reason: null, acked_at: '2026-11-22T10:00:01.000Z' });

    expect(await markConflicts(db, [{ id: 9, reason: 'cancelled' }, { id: 1, reason: 'superseded' }])).toBe(1);
    expect(await getAckState(db, 9)).toEqual({ status: 'conflict', conflict_reason: 'cancelled', acked_at: '2026-11-22T10:00:01.000Z' });
    expect((await getAckState(db, 1))?.status).toBe('acknowledged');
    expect(await idsToAcknowledge(db)).toEqual([5]);

    await expect(idsToAcknowledge(db, 501)).rejects.toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }) as Error);
    await expect(markConflicts(db, [{ id: 5, reason: '' }])).rejects.toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }) as Error,
    );
    expect((await getAckState(db, 5))?.status).toBe('pending'); // the failed batch changed nothing
    expect(await getAckState(db, 20)).toBeUndefined(); // stored from a history read: no acknowledgement state

    // A page delivering stored versions again leaves their state alone: never back to 'pending'.
    const again = await recordDeliveryIntent(db, { requestId: '55555555-5555-4555-8555-555555555555', filters: {}, cursor: null });
    await storeDeliveredPage(db, again.id, [1, 9, 20].map((id) => approval(id)), null);
    expect(await Promise.all([1, 9, 20].map(async (id) => (await getAckState(db, id))?.status))).toEqual(['acknowledged', 'conflict', undefined]);
    expect(await idsToAcknowledge(db)).toEqual([5]);
  });
});
