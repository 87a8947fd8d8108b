/**
 * Regression (found with issue 11's flaky parse-json test): V8 13.6's JSON.parse (Node.js 24) can read an object key
 * written with an escape as a backslash once it has parsed objects with a backslash key (nodejs/node#63785). Products
 * whose custom columns are named `\` and `"` came back from the mirror's pages as two columns named `\`. The client
 * reads response bodies through parseJsonText (src/json-text.ts). Dialect: default (its imports keep custom columns).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.ts';
import { tempDir } from '../store/support.ts';

let sandbox: SandboxHandle;
let client: ApiClient;
const dispatcher = new Agent({ allowH2: false, connections: 2 });
beforeAll(async () => {
  sandbox = await startSandbox({ approvals: 0, largeGridRows: 0 });
  client = new ApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey, dispatcher });
});
afterAll(async () => {
  await dispatcher.close();
  await sandbox.close();
});

it('keeps custom column names with a backslash and a quote as the server wrote them, page after page', async () => {
  const csv = join(tempDir(), 'products.csv');
  await writeFile(csv, 'item_id,sku,\\,""""\nESC-1,E1,back,\nESC-2,E2,,quote\nESC-3,E3,back,\nESC-4,E4,,quote\n');
  const { job_id: jobId } = await client.products.import(csv);
  for (let job = await client.jobs.get(jobId); job.phase !== 'completed'; job = await client.jobs.get(jobId)) {
    expect(job.phase).not.toBe('failed');
    await new Promise((r) => setImmediate(r));
  }
  const custom: Record<string, unknown>[] = [];
  for await (const page of client.products.list({ limit: 1 })) {
    for (const item of page.items as Record<string, unknown>[]) {
      if (typeof item['item_id'] === 'string' && item['item_id'].startsWith('ESC-')) {
        custom.push(Object.fromEntries(Object.entries(item).filter(([key]) => key === '\\' || key === '"')));
      }
    }
  }
  expect(custom).toEqual([{ '\\': 'back' }, { '"': 'quote' }, { '\\': 'back' }, { '"': 'quote' }]);
});
