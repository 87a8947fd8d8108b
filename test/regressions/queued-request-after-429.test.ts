/**
 * Regression (found by the chaos suite): a request beyond the connection limit passed the rate gate while it was
 * still open, waited in undici's queue, and went out the moment the connection freed, right after the 429 that
 * had just closed the gate came back on it: a request inside the Retry-After window. Now a request takes one of
 * api.max_connections slots before it passes the gate, so it is only ever sent straight from the gate.
 */
import { Agent } from 'undici';
import { expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { openForFile } from '../support/open-for-file.ts';
import { rateLimited, startScriptedServer, VERIFY_BODY } from '../support/scripted-server.ts';
import { until } from '../support/test-logger.ts';

const ok = { reply: 200, body: VERIFY_BODY };
const server = openForFile(() => startScriptedServer([rateLimited(5), ok, ok]));

it('a request waiting for a connection is not sent after a 429 on that connection before Retry-After', async () => {
  const clock = new ManualClock();
  const dispatcher = new Agent({ allowH2: false, connections: 1 });
  const client = new ApiClient({ baseUrl: server.url, apiKey: 'svc_live_queued_request_test_0123456789', dispatcher, clock, maxInFlight: 1 });
  try {
    const both = Promise.all([client.auth.verify(), client.auth.verify()]);
    // Once a request waits at the gate and undici has nothing queued or running, whatever was going to be sent
    // before the Retry-After has been sent: only the first request may have reached the server.
    const busy = () => Object.values(dispatcher.stats).some((s) => s.pending > 0 || s.running > 0);
    await until(() => clock.waiting > 0 && !busy(), 'the requests to settle at the gate');
    expect(server.received).toHaveLength(1);
    await clock.advance(5_000);
    await expect(both).resolves.toHaveLength(2);
    expect(server.received).toHaveLength(3);
  } finally {
    await dispatcher.close();
  }
});
