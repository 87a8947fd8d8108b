/**
 * Issue 27, point 7: one host (a stranger on the store network, or a till gone wrong) opened 4,096 idle connections,
 * the default feed.max_connections, and locked every other till out. Connections are now capped per client address,
 * and a connection that does not send a complete request head within a few seconds is closed, over TLS too.
 *
 * Real sockets against the real listener: another host is another loopback address (127.0.0.2: the listener on
 * 127.0.0.1 sees it as a different client). Timeouts are shrunk so that each case ends in a fraction of a second.
 */
import { connect as tlsConnect } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { FEED_LIMITS } from '../../src/feed/server.ts';
import { abuseSize } from '../support/abuse.ts';
import { until } from '../support/test-logger.ts';
import { feedHarness, openSocket, STORE_A, testConsumer } from '../feed/support.ts';

const pos = testConsumer('pos', [STORE_A]);
/** Idle connections stay open as long as the test needs them. */
const PATIENT = { headersTimeoutMs: 60_000, requestTimeoutMs: 60_000, tlsHandshakeTimeoutMs: 60_000 };
const IDLE = abuseSize(64, 4096);
const PER_ADDRESS = abuseSize(16, 256);

describe('feed connections per address', () => {
  it('idle connections of one address do not lock another out', async () => {
    let open = 0;
    const h = await feedHarness('http', [pos], {
      config: { max_connections: IDLE, max_connections_per_address: PER_ADDRESS },
      limits: PATIENT,
      events: { connections: (n) => (open = n) },
    });
    let refused = 0;
    const held = [];
    for (let opened = 0; opened < IDLE; opened += 64) {
      const batch = await Promise.all(Array.from({ length: Math.min(64, IDLE - opened) }, () => openSocket(h.url, '127.0.0.2')));
      for (const c of batch) void c.closed.then(() => (refused += 1));
      held.push(...batch);
    }
    // Every connection of the stranger is either open at the listener or was closed by it.
    await until(() => open + refused === IDLE, 'the listener to take or refuse every connection');
    expect(open).toBe(PER_ADDRESS);
    expect(h.logText()).toContain(`feed connections from 127.0.0.2 refused: feed.max_connections_per_address (${PER_ADDRESS}) reached`);
    // A till on another address is served.
    expect((await h.call('GET', '/feed/v1/offset', { token: pos.token })).status).toBe(200);
    const withTill = open; // the stranger's and the till's keep-alive connection
    for (const c of held) c.socket.destroy();
    await until(() => open === withTill - PER_ADDRESS, "the stranger's connections to close");
    // The address's connections are counted down as they close: it may connect again.
    const again = await openSocket(h.url, '127.0.0.2');
    await until(() => open === withTill - PER_ADDRESS + 1, 'the listener to take the connection');
    again.socket.destroy();
  });
});

describe('feed connections without a request', () => {
  it('a request head must arrive within a few seconds by default', () => {
    expect(FEED_LIMITS.headersTimeoutMs).toBeLessThanOrEqual(5_000);
  });

  it('closes a TLS connection that completes its handshake and then drips its headers (slowloris)', async () => {
    const h = await feedHarness('https', [pos], { limits: { headersTimeoutMs: 300, requestTimeoutMs: 400, checkIntervalMs: 50, tlsHandshakeTimeoutMs: 60_000 } });
    const { port } = new URL(h.url);
    const socket = tlsConnect({ host: '127.0.0.1', port: Number(port), rejectUnauthorized: false });
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()));
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write('GET /feed/v1/offset HTTP/1.1\r\nHost: x\r\n');
    const drip = setInterval(() => socket.write('X-Drip: 1\r\n'), 50);
    try {
      await closed;
    } finally {
      clearInterval(drip);
    }
    expect(received).toMatch(/^HTTP\/1\.1 408/);
    expect((await h.call('GET', '/feed/v1/offset', { token: pos.token })).status).toBe(200);
  });
});
