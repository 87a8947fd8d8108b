import { beforeAll, describe, expect, it } from 'vitest';
import { AckConflictBody, AcknowledgeResult } from '../../src/api/schemas/index.ts';
import { firstError, sandboxForFile } from './support.ts';

const h = sandboxForFile();
beforeAll(() => {
  h.sandbox.control.injectApprovals({ count: 20 });
});

const ack = (ids: number[]) => h.client.post('/v1/approved_prices/acknowledge', { approval_ids: ids });
const acks = () => new Map(h.sandbox.control.state().approvals.acks.map((a) => [a.id, a]));

describe('POST /v1/approved_prices/acknowledge', () => {
  it('acknowledges a batch: 200 with the ids, each acknowledged exactly once', async () => {
    const res = await ack([1, 2, 3, 3]);
    expect(res.status).toBe(200);
    expect(AcknowledgeResult.parse(res.body).acknowledged).toEqual([1, 2, 3]);
    expect([...acks().values()].map((a) => [a.id, a.ack_count, a.conflicting_acks])).toEqual([
      [1, 1, 0],
      [2, 1, 0],
      [3, 1, 0],
    ]);
    expect(h.sandbox.control.state().approvals.acknowledged).toBe(3);
  });

  it('any conflicting id refuses the whole batch with 409 and the conflicts; nothing is acknowledged', async () => {
    h.sandbox.control.cancel(5);
    h.sandbox.control.amend(6);
    const res = await ack([4, 1, 5, 6, 999, 7]);
    expect(res.status).toBe(409);
    const body = AckConflictBody.parse(res.body);
    expect(body.detail.conflicts).toEqual([
      { id: 1, reason: 'already_acknowledged' },
      { id: 5, reason: 'cancelled' },
      { id: 6, reason: 'superseded' },
      { id: 999, reason: 'unknown' },
    ]);
    expect(body.detail.message).toEqual(expect.stringContaining('nothing')) ;
    const state = acks();
    expect(state.has(4)).toBe(false);
    expect(state.has(7)).toBe(false);
    expect(state.get(1)).toMatchObject({ ack_count: 1, conflicting_acks: 1 });
    expect((await ack([4, 7])).status).toBe(200);
  });

  it('omits the conflict list when switched off, so an agent must split the batch', async () => {
    h.sandbox.control.setAckConflictDetail(false);
    try {
      const res = await ack([8, 1]);
      expect(res.status).toBe(409);
      const body = AckConflictBody.parse(res.body);
      expect(body.detail.conflicts).toBeUndefined();
      expect(typeof body.detail.message).toBe('string');
      expect((await ack([8])).status).toBe(200);
      expect((await ack([1])).status).toBe(409);
    } finally {
      h.sandbox.control.setAckConflictDetail(true);
    }
    expect(acks().get(1)).toMatchObject({ ack_count: 1, conflicting_acks: 3 });
  });

  it('takes 1 to 500 ids; more or none is 422', async () => {
    const tooMany = await ack(Array.from({ length: 501 }, (_, i) => i + 1));
    expect(tooMany.status).toBe(422);
    expect(firstError(tooMany.body)).toMatchObject({ loc: ['body', 'approval_ids'], type: 'too_long' });
    expect((await ack([])).status).toBe(422);
    const fresh = Array.from({ length: 11 }, (_, i) => i + 9).filter((id) => id !== 6);
    expect((await ack(fresh)).status).toBe(200);
  });
});
