/**
 * A bulk request refused whole by a 422 that names its rows (src/ingest/send/bulk-refused-rows.ts): the named rows
 * are refused with the server's reason, the rest is sent again, and a server cannot make a batch go out more than
 * MAX_REFUSALS_PER_BATCH + 1 times. End to end against the sandbox's strict dialect: test/integration/push-dialects.
 */
import { describe, expect, it } from 'vitest';
import { ApiValidationError } from '../../src/api/errors.ts';
import type { BulkResponse, ValidationError } from '../../src/api/schemas/index.ts';
import { MAX_REFUSALS_PER_BATCH, sendRefusingNamedRows } from '../../src/ingest/send/bulk-refused-rows.ts';

type Row = Readonly<Record<string, unknown>>;
const rows: Row[] = ['A', 'B', 'C', 'D', 'E'].map((id) => ({ id }));

/** A server that refuses every request holding a row of `bad` with a 422 naming those rows; `loc` shapes the names. */
function server(bad: readonly string[], loc = (index: number): ValidationError['loc'] => ['body', 'items', index, 'store_id']) {
  const sent: string[][] = [];
  const send = (batch: readonly Row[]): Promise<BulkResponse> => {
    const ids = batch.map((r) => r['id'] as string);
    sent.push(ids);
    const named = ids.flatMap((id, index) => (bad.includes(id) ? [{ loc: loc(index), msg: `unknown store of ${id}`, type: 'value_error' }] : []));
    if (named.length > 0) return Promise.reject(new ApiValidationError('productStore.bulk', named, { detail: named }));
    return Promise.resolve({ results: ids.map((id, index) => ({ index, ok: true, id: `id-${id}` })) });
  };
  return { sent, send };
}

describe('a bulk request refused whole for the rows it names', () => {
  it('refuses the named rows with the server\'s reason and writes the rest, results in the batch\'s order', async () => {
    const s = server(['B', 'D']);
    const response = await sendRefusingNamedRows(s.send, rows);
    expect(s.sent).toEqual([['A', 'B', 'C', 'D', 'E'], ['A', 'C', 'E']]);
    expect(response.results).toEqual([
      { index: 0, ok: true, id: 'id-A' },
      { index: 1, ok: false, code: 'value_error', message: 'store_id: unknown store of B' },
      { index: 2, ok: true, id: 'id-C' },
      { index: 3, ok: false, code: 'value_error', message: 'store_id: unknown store of D' },
      { index: 4, ok: true, id: 'id-E' },
    ]);
  });

  it('a batch whose every row is named sends nothing more', async () => {
    const s = server(['A', 'B', 'C', 'D', 'E']);
    const response = await sendRefusingNamedRows(s.send, rows);
    expect(s.sent).toHaveLength(1);
    expect(response.results.map((r) => r.ok)).toEqual([false, false, false, false, false]);
  });

  it('a 422 naming anything but rows of the request stays the batch\'s failure', async () => {
    for (const loc of [() => ['body', 'items'], () => ['body', 'items', 5, 'store_id'], (i: number) => ['query', 'items', i]]) {
      const s = server(['B'], loc);
      await expect(sendRefusingNamedRows(s.send, rows)).rejects.toBeInstanceOf(ApiValidationError);
      expect(s.sent).toHaveLength(1);
    }
  });

  it('a server that names one more row each time fails the batch after MAX_REFUSALS_PER_BATCH refusals', async () => {
    let round = 0;
    const sent: number[] = [];
    const send = (batch: readonly Row[]): Promise<BulkResponse> => {
      sent.push(batch.length);
      round += 1;
      return Promise.reject(new ApiValidationError('productStore.bulk', [{ loc: ['body', 'items', 0], msg: `round ${round}`, type: 'value_error' }], null));
    };
    await expect(sendRefusingNamedRows(send, rows)).rejects.toThrow(`round ${MAX_REFUSALS_PER_BATCH + 1}`);
    expect(sent).toHaveLength(MAX_REFUSALS_PER_BATCH + 1);
  });
});
