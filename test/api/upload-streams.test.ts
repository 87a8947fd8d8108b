/**
 * An import upload streams the CSV from disk: memory does not grow with the file. The same upload is measured for a
 * 32 MB and a 320 MB file; the larger must not cost more than a fraction of the 288 MB difference. (The fixed cost,
 * about 70 MB on these machines, is undici's and the blob reader's buffers.) A bound on memory, not on time.
 */
import { mkdtemp, open, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';

let dir: string;
let received = 0;
const server = createServer((req, res) => {
  req.on('data', (chunk: Buffer) => (received += chunk.length));
  req.on('end', () => {
    res.writeHead(202, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ job_id: '5b1c2f8e-4c5b-4f7a-9a51-0a6f0f7c1a11' }));
  });
});
const dispatcher = new Agent({ allowH2: false });
let client: ApiClient;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pa-upload-big-'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  client = new ApiClient({ baseUrl, apiKey: 'svc_live_x_upload_test', dispatcher });
});

afterAll(async () => {
  await dispatcher.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true });
});

async function csvOf(megabytes: number): Promise<string> {
  const file = join(dir, `tx-${megabytes}.csv`);
  const handle = await open(file, 'w');
  const line = Buffer.from('T000000001,ITEM-0001,2026-11-01T10:00:00Z,1,9.99\n');
  const block = Buffer.concat(Array.from({ length: Math.ceil((1 << 20) / line.length) }, () => line));
  for (let written = 0; written < megabytes; written += 1) await handle.write(block);
  await handle.close();
  return file;
}

/** Peak RSS growth (MB) while uploading `file`. */
async function uploadGrowth(file: string, bytes: number): Promise<number> {
  received = 0;
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  try {
    await client.transactions.import(file);
  } finally {
    clearInterval(sampler);
  }
  expect(received).toBeGreaterThan(bytes);
  return (peak - before) / (1 << 20);
}

it('uploads a CSV without memory growing with its size', async () => {
  const small = await uploadGrowth(await csvOf(32), 32 << 20);
  const large = await uploadGrowth(await csvOf(320), 320 << 20);
  expect(large - small).toBeLessThan(96);
  expect(large).toBeLessThan(160);
});
