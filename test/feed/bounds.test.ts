/**
 * A slow or idle client cannot hold the feed listener: idle connections, headers that never end, a TLS handshake that
 * never starts, too many connections, bodies and headers too large, an answer nobody reads. Real sockets against the
 * real listener, with its bounds shrunk so that each case ends in a fraction of a second (the defaults are seconds:
 * FEED_LIMITS). And a renewed certificate is presented after a reload.
 */
import { connect as tlsConnect } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { until } from '../support/test-logger.ts';
import { feedConfig, feedHarness, openSocket, type Protocol, STORE_A, testConsumer, TLS_DIR } from './support.ts';

const pos = testConsumer('pos', [STORE_A]);
const SMALL = { headersTimeoutMs: 300, requestTimeoutMs: 400, keepAliveTimeoutMs: 300, tlsHandshakeTimeoutMs: 300, checkIntervalMs: 50 };

describe('feed listener bounds', () => {
  it('closes a connection that sends nothing, or headers that never end (HTTP)', async () => {
    const h = await feedHarness('http', [pos], { limits: SMALL });
    const idle = await openSocket(h.url);
    const slow = await openSocket(h.url);
    slow.socket.write('GET /feed/v1/changes HTTP/1.1\r\nHost: x\r\n');
    const drip = setInterval(() => slow.socket.write('X-Drip: 1\r\n'), 50); // a slowloris: never the blank line
    try {
      expect(await slow.closed).toMatch(/^HTTP\/1\.1 408/);
      await idle.closed; // no request at all: closed by the headers timeout too
    } finally {
      clearInterval(drip);
    }
    expect((await h.call('GET', '/feed/v1/offset', { token: pos.token })).status).toBe(200);
  });

  it('closes a TLS connection whose handshake never comes', async () => {
    const h = await feedHarness('https', [pos], { limits: SMALL });
    const silent = await openSocket(h.url);
    await silent.closed;
    expect((await h.call('GET', '/feed/v1/offset', { token: pos.token })).status).toBe(200);
  });

  it.each<Protocol>(['http', 'https'])('refuses connections beyond max_connections until one closes (%s)', async (protocol) => {
    const h = await feedHarness(protocol, [pos], { config: { max_connections: 3 }, limits: { ...SMALL, headersTimeoutMs: 60_000, requestTimeoutMs: 60_000, tlsHandshakeTimeoutMs: 60_000 } });
    const held = await Promise.all([openSocket(h.url), openSocket(h.url), openSocket(h.url)]);
    const extra = await openSocket(h.url);
    expect(await extra.closed).toBe(''); // dropped at once, without an answer
    expect(h.logText()).toContain('feed connections refused: feed.max_connections reached');
    for (const c of held) c.socket.destroy();
    await Promise.all(held.map((c) => c.closed));
    let status = 0;
    for (let attempt = 0; attempt < 50 && status !== 200; attempt += 1) {
      status = await h.call('GET', '/feed/v1/offset', { token: pos.token }).then((a) => a.status, () => 0);
    }
    expect(status).toBe(200);
  });

  it.each<Protocol>(['http', 'https'])('answers 413 to a body above 16 KiB and 431 to headers above 8 KiB (%s)', async (protocol) => {
    const h = await feedHarness(protocol, [pos]);
    const big = await h.call('PUT', '/feed/v1/offset', { token: pos.token, body: JSON.stringify({ seq: 0, pad: 'x'.repeat(20_000) }) });
    expect([big.status, big.json()]).toEqual([413, { detail: 'the request body is larger than 16384 bytes' }]);
    const headers = await h.call('GET', '/feed/v1/offset', { token: `${pos.token}${'x'.repeat(9_000)}` }).then((a) => a.status, (e: Error) => e.message);
    expect(headers).toBe(431);
  });
});

describe('requests without a valid token', () => {
  it('close their connection after the answer (a wrong path, a wrong method, a wrong token); a till keeps its own', async () => {
    const h = await feedHarness('http', [pos], { limits: { ...SMALL, keepAliveTimeoutMs: 60_000, headersTimeoutMs: 60_000, requestTimeoutMs: 60_000 } });
    for (const request of ['GET /x', 'DELETE /feed/v1/offset', 'GET /feed/v1/offset']) {
      const stranger = await openSocket(h.url);
      stranger.socket.write(`${request} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\n\r\n`);
      expect(await stranger.closed).toMatch(/^HTTP\/1\.1 40[145] [^]*\r\nconnection: close\r\n/i);
    }
    const till = await openSocket(h.url);
    till.socket.write(`GET /feed/v1/offset HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${pos.token}\r\n\r\n`);
    const open = await Promise.race([till.closed.then(() => 'closed'), new Promise((resolve) => setTimeout(resolve, 300, 'open'))]);
    expect(open).toBe('open'); // kept alive for the till's next request
    till.socket.destroy();
  });

  it('a till that hangs up in the middle of its body is no error of the agent', async () => {
    const h = await feedHarness('http', [pos]);
    const till = await openSocket(h.url);
    till.socket.write(`PUT /feed/v1/offset HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${pos.token}\r\nContent-Length: 100\r\n\r\n{"seq":`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    till.socket.destroy();
    await till.closed;
    expect((await h.call('GET', '/feed/v1/offset', { token: pos.token })).status).toBe(200);
    expect(h.logText()).not.toContain('feed request failed');
  });
});

describe('feed listener over time', () => {
  it('destroys the connection of a client that stops reading its answer', async () => {
    let open = 0;
    const h = await feedHarness('http', [pos], { limits: { responseFlushMs: 300 }, events: { connections: (n) => (open = n) } });
    // About 20 MB in one answer: more than the socket buffers of loopback hold, so most of it waits in the listener.
    const long = 'L'.repeat(4_000);
    await h.append(Array.from({ length: 2_500 }, () => STORE_A), { item_id: long, sku: long });
    const reader = await openSocket(h.url);
    reader.socket.pause(); // reads nothing
    reader.socket.write(`GET /feed/v1/changes?limit=10000 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${pos.token}\r\n\r\n`);
    await until(() => open === 1, 'the connection to open');
    await until(() => open === 0, 'the listener to give the connection up', 10_000);
    reader.socket.destroy();
    expect((await h.call('GET', '/feed/v1/offset', { token: pos.token })).status).toBe(200);
  });

  it('presents a renewed certificate after a reload, to new connections', async () => {
    const h = await feedHarness('https', [pos]);
    const subject = () => {
      const { port } = new URL(h.url);
      return new Promise<string>((resolve, reject) => {
        const socket = tlsConnect({ host: '127.0.0.1', port: Number(port), rejectUnauthorized: false }, () => {
          resolve(String(socket.getPeerCertificate().subject.CN));
          socket.destroy();
        });
        socket.once('error', reject);
      });
    };
    expect(await subject()).toBe('pricing-agent feed test');
    await h.server.reconfigure(feedConfig('https', [pos], { tls: { cert_file: `${TLS_DIR}other-cert.pem`, key_file: `${TLS_DIR}other-key.pem` } }));
    expect(await subject()).toBe('pricing-agent feed test (renewed)');
  });
});
