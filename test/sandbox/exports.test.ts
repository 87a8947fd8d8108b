import { describe, expect, it } from 'vitest';
import { ExportStatus } from '../../src/api/schemas/index.ts';
import { firstError, sandboxForFile, uuidOf } from './support.ts';

const h = sandboxForFile({ jobPace: { queuedMs: 1000, tickMs: 2000, rowsPerTick: 100 } });

const cancel = async (id: string) => {
  const res = await h.client.post(`/v1/transactions/exports/${id}/cancel`);
  expect(res.status).toBe(200);
  return ExportStatus.parse(res.body); // strict: no additional properties
};

describe('POST /v1/transactions/exports/{export_id}/cancel', () => {
  it('seeds exports in every state', () => {
    const states = h.sandbox.control.state().exports.map((e) => e.status);
    expect(new Set(states)).toEqual(new Set(['queued', 'running', 'completed', 'failed', 'cancelling', 'cancelled', 'expired']));
  });

  it('cancels a queued export at once', async () => {
    const created = h.sandbox.control.addExport('queued');
    expect(await cancel(created.export_id)).toEqual({ ...created, status: 'cancelled' });
  });

  it('moves a running export to cancelling, then cancelled one tick later', async () => {
    const created = h.sandbox.control.addExport('running');
    expect((await cancel(created.export_id)).status).toBe('cancelling');
    expect((await cancel(created.export_id)).status).toBe('cancelling');
    await h.clock.advance(2000);
    expect((await cancel(created.export_id)).status).toBe('cancelled');
  });

  it('returns terminal exports unchanged', async () => {
    for (const status of ['completed', 'failed', 'cancelled', 'expired'] as const) {
      const created = h.sandbox.control.addExport(status);
      expect(await cancel(created.export_id)).toEqual(created);
    }
  });

  it('answers 422 for a non-UUID id and 404 for an unknown one', async () => {
    const bad = await h.client.post('/v1/transactions/exports/export-1/cancel');
    expect(bad.status).toBe(422);
    expect(firstError(bad.body)).toMatchObject({ loc: ['path', 'export_id'], type: 'uuid_parsing' });
    expect((await h.client.post(`/v1/transactions/exports/${uuidOf(1)}/cancel`)).status).toBe(404);
    expect((await h.client.get(`/v1/transactions/exports/${uuidOf(1)}/cancel`)).status).toBe(405);
  });
});
