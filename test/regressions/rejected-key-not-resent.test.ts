/**
 * Regression (found by the chaos suite): after a rotated key's first 401, the daemon's other workers (the rest of
 * a file in another source, a job's next page) went on sending the rejected key, four requests and more where the
 * issue allows three. The daemon's client now refuses a key the API rejected until another one is set.
 */
import { expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { API_ERROR_CODES } from '../../src/api/errors.ts';
import { sandboxWithAgentForFile } from '../support/sandbox-for-file.ts';

const api = sandboxWithAgentForFile({ allowH2: false });

it('a rejected key is sent once; later calls stop locally until a new key is set', async () => {
  const client = new ApiClient({ baseUrl: api.sandbox.url, apiKey: api.sandbox.apiKey, dispatcher: api.dispatcher, refuseRejectedKey: true });
  await client.auth.verify();
  const newKey = api.sandbox.control.rotateKey();
  const outcomes = await Promise.allSettled([
    client.auth.verify(),
    client.products.bulk([{ item_id: 'A', sku: 'A' }]).then(() => client.products.bulk([{ item_id: 'B', sku: 'B' }])),
  ]);
  for (const o of outcomes) expect(o).toMatchObject({ status: 'rejected', reason: { code: API_ERROR_CODES.keyRejected, status: 401 } });
  await expect(client.transactions.bulk([{ transaction_id: 'T', item_id: 'A', transaction_timestamp: '2026-11-20T08:00:00Z' }])).rejects.toMatchObject({ code: API_ERROR_CODES.keyRejected });
  // The two calls in flight together may both have reached the API; nothing after them did.
  expect(api.sandbox.control.state({ keys: false }).auth.rejected_total).toBeLessThanOrEqual(2);
  client.transport.setApiKey(newKey);
  await expect(client.auth.verify()).resolves.toMatchObject({ ok: true });
  expect(api.sandbox.control.state({ keys: true }).products.keys).toEqual([]);
});
