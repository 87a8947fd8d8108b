/**
 * Connection failures against a real loopback server: a reset after the request arrived is retried for an
 * idempotent call and never for the non-idempotent create; a refused connection (nothing sent) is retried for both.
 * Also the multipart upload: a part named `file`, re-read from disk for a retried upload.
 */
import { writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { API_ERROR_CODES } from '../../src/api/errors.ts';
import { ManualClock, drive } from '../support/manual-clock.ts';
import { refusedUrl, startScriptedServer, type Step } from '../support/scripted-server.ts';

const KEY = 'svc_live_transport_errors_key_987654321';
const dispatcher = new Agent({ allowH2: false });
afterAll(() => dispatcher.close());

function clientFor(baseUrl: string, clock = new ManualClock()) {
  return { client: new ApiClient({ baseUrl, apiKey: KEY, dispatcher, clock, random: () => 0 }), clock };
}

async function withServer(steps: Step[], run: (url: string, received: { url: string; body: Buffer; headers: Record<string, unknown> }[]) => Promise<void>) {
  const server = await startScriptedServer(steps);
  try {
    await run(server.url, server.received);
  } finally {
    await server.close();
  }
}

const competitorPrice = { competitor_name: 'C', observed_at: '2026-11-01T10:00:00Z', regular_price: '1.00', effective_price: '0.90' };
const transaction = { transaction_id: 'T1', item_id: 'A', transaction_timestamp: '2026-11-01T10:00:00Z' };

describe('connection reset', () => {
  it('is retried for an idempotent bulk call', async () => {
    await withServer([{ reset: true }, { reply: 200, body: { results: [{ index: 0, ok: true, id: 'x' }] } }], async (url, received) => {
      const { client, clock } = clientFor(url);
      await expect(drive(clock, client.transactions.bulk([transaction]))).resolves.toMatchObject({ results: [{ ok: true }] });
      expect(received).toHaveLength(2);
      expect(clock.sleeps).toEqual([1000]);
    });
  });

  it('is never retried for POST /v1/competitor_prices: the outcome is unknown', async () => {
    await withServer([{ reset: true }, { reply: 201, body: { id: 1, ...competitorPrice } }], async (url, received) => {
      const { client, clock } = clientFor(url);
      const error = await drive(clock, client.competitorPrices.create(competitorPrice)).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: API_ERROR_CODES.outcomeUnknown, retryable: false });
      expect(received).toHaveLength(1);
      expect(clock.sleeps).toEqual([]);
    });
  });
});

describe('connection refused', () => {
  it('is retried even for the create, because nothing reached the server', async () => {
    const { client, clock } = clientFor(await refusedUrl());
    const error = await drive(clock, client.competitorPrices.create(competitorPrice)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: API_ERROR_CODES.transport, transportCode: 'ECONNREFUSED', retryable: true });
    expect(clock.sleeps).toEqual([1000, 2000, 4000, 8000]);
  });
});

describe('multipart import upload', () => {
  it('sends the CSV as a part named file, and re-reads it from disk on a retried upload', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pa-upload-'));
    const file = join(dir, 'products.csv');
    const csv = 'item_id,sku,product_name\nA1,A1,Äpfel "rot"\nB2,B2,Birnen\n';
    await writeFile(file, csv);
    const jobId = '5b1c2f8e-4c5b-4f7a-9a51-0a6f0f7c1a11';
    await withServer([{ reply: 503 }, { reply: 202, body: { job_id: jobId } }], async (url, received) => {
      const { client, clock } = clientFor(url);
      await expect(drive(clock, client.products.import(file))).resolves.toEqual({ job_id: jobId });
      expect(received).toHaveLength(2);
      for (const request of received) {
        expect(request.url).toBe('/v1/imports/products');
        const type = String(request.headers['content-type']);
        const boundary = /boundary=(.+)$/.exec(type)?.[1];
        expect(type).toMatch(/^multipart\/form-data; boundary=/);
        const body = request.body.toString('utf8');
        expect(body).toContain(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="products.csv"\r\nContent-Type: text/csv\r\n\r\n${csv}\r\n--${boundary}--`);
      }
    });
  });
});
