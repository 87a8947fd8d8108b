/**
 * Regression (found by the chaos suite): a request beyond the connection limit passed the rate gate while it was
 * still open, waited in undici's queue, and went out the moment the connection freed, right after the 429 that
 * had just closed the gate came back on it: a request inside the Retry-After window. Now a request takes one of
 * api.max_connections slots before it passes the gate, so it is only ever sent straight from the gate.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { until } from '../support/test-logger.ts';

const verifyBody = { ok: true, user_id: '0d6f4a2b-1c3e-4b5a-8f9e-2a1b3c4d5e6f', api_key_id: '1d6f4a2b-1c3e-4b5a-8f9e-2a1b3c4d5e6f' };
let server: Server;
let url = '';
const arrivals: number[] = [];
let first = true;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      arrivals.push(arrivals.length);
      if (first) {
        first = false;
        res.writeHead(429, { 'retry-after': '5', 'content-type': 'application/json' });
        res.end('{"detail":"rate limited"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(verifyBody));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

it('a request waiting for a connection is not sent after a 429 on that connection before Retry-After', async () => {
  const clock = new ManualClock();
  const dispatcher = new Agent({ allowH2: false, connections: 1 });
  const client = new ApiClient({ baseUrl: url, apiKey: 'svc_live_queued_request_test_0123456789', dispatcher, clock, maxInFlight: 1 });
  try {
    const both = Promise.all([client.auth.verify(), client.auth.verify()]);
    // Once a request waits at the gate and undici has nothing queued or running, whatever was going to be sent
    // before the Retry-After has been sent: only the first request may have reached the server.
    const busy = () => Object.values(dispatcher.stats).some((s) => s.pending > 0 || s.running > 0);
    await until(() => clock.waiting > 0 && !busy(), 'the requests to settle at the gate');
    expect(arrivals).toHaveLength(1);
    await clock.advance(5_000);
    await expect(both).resolves.toHaveLength(2);
    expect(arrivals).toHaveLength(3);
  } finally {
    await dispatcher.close();
  }
});
