/**
 * The feed listener in the test process, over HTTP or HTTPS (the self-signed pair in test/fixtures/feed-tls), on a
 * real SQLite file, with consumers whose tokens the test knows, and a client that speaks to it as a POS would.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { sha256Hex, type FeedConfig } from '../../src/config/feed-schema.ts';
import { FeedServer, type FeedLimits, type FeedServerEvents } from '../../src/feed/server.ts';
import type { StateDb } from '../../src/store/state-db.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { sqlValue } from '../support/state-sql.ts';
import { captureLogger } from '../support/test-logger.ts';
import { approval, deliver, onCleanup, openTempDb } from '../outbox/support.ts';

export const TLS_DIR = fileURLToPath(new URL('../fixtures/feed-tls/', import.meta.url));
export const TLS = { cert_file: `${TLS_DIR}cert.pem`, key_file: `${TLS_DIR}key.pem` };
export const TLS_CA = readFileSync(TLS.cert_file);

export const STORE_A = 'aaaaaaaa-0000-4000-8000-00000000000a';
export const STORE_B = 'bbbbbbbb-0000-4000-8000-00000000000b';
export const STORE_C = 'cccccccc-0000-4000-8000-00000000000c';

export type Protocol = 'http' | 'https';

export interface TestConsumer {
  name: string;
  token: string;
  stores: '*' | string[];
}

export function testConsumer(name: string, stores: '*' | string[]): TestConsumer {
  return { name, token: randomBytes(32).toString('hex'), stores };
}

export function feedConfig(protocol: Protocol, consumers: readonly TestConsumer[], overrides: Partial<FeedConfig> = {}): FeedConfig {
  return {
    listen: '127.0.0.1:0',
    tls: protocol === 'https' ? TLS : null,
    consumers: consumers.map((c) => ({ name: c.name, token_file: null, token_sha256: sha256Hex(c.token), stores: c.stores })),
    apply_deadline: '2h',
    rate_limit: { requests_per_second: 1000, burst: 1000 },
    max_connections: 100,
    max_connections_per_address: 100,
    max_requests_per_consumer: 8,
    ...overrides,
  };
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: () => unknown;
}

export interface FeedHarness {
  db: StateDb;
  clock: ManualClock;
  server: FeedServer;
  url: string;
  protocol: Protocol;
  logText: () => string;
  /** A request as a POS sends it; `token` null sends no Authorization header. */
  call(method: string, path: string, options?: { token?: string | null; body?: unknown; accept?: string; signal?: AbortSignal }): Promise<Answer>;
  /** Appends feed rows: one approval per entry, for a store (null: product-level). Returns the last seq. */
  append(stores: readonly (string | null)[], overrides?: Parameters<typeof approval>[1]): Promise<number>;
  dispatcher: Agent;
}

export async function feedHarness(
  protocol: Protocol,
  consumers: readonly TestConsumer[],
  options: { config?: Partial<FeedConfig>; limits?: Partial<FeedLimits>; events?: FeedServerEvents; db?: StateDb } = {},
): Promise<FeedHarness> {
  const clock = new ManualClock(Date.parse('2026-11-22T10:00:00Z'));
  const db = options.db ?? (await openTempDb({ now: () => clock.now() }));
  const { logger, lines } = captureLogger('debug');
  const server = await FeedServer.start({
    db,
    clock,
    logger,
    config: feedConfig(protocol, consumers, options.config),
    limits: options.limits,
    events: options.events,
    crossProcessPollMs: 25,
  });
  const dispatcher = new Agent({ allowH2: false, connect: { ca: TLS_CA } });
  let nextId = 1;
  onCleanup(async () => {
    await server.close();
    await dispatcher.close();
  });
  return {
    db,
    clock,
    server,
    url: server.url,
    protocol,
    dispatcher,
    logText: () => JSON.stringify(lines()),
    async call(method, path, callOptions = {}) {
      const headers: Record<string, string> = {};
      const token = callOptions.token === undefined ? consumers[0]?.token : callOptions.token;
      if (token !== null && token !== undefined) headers['authorization'] = `Bearer ${token}`;
      if (callOptions.accept !== undefined) headers['accept'] = callOptions.accept;
      if (callOptions.body !== undefined) headers['content-type'] = 'application/json';
      const res = await request(`${server.url}${path}`, {
        method: method as 'GET',
        headers,
        body: callOptions.body === undefined ? undefined : typeof callOptions.body === 'string' ? callOptions.body : JSON.stringify(callOptions.body),
        dispatcher,
        signal: callOptions.signal,
      });
      const text = await res.body.text();
      return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) as unknown };
    },
    async append(stores, overrides = {}) {
      const items = stores.map((store) => approval(nextId++, { store_id: store, ...overrides }));
      await deliver(db, items);
      return (await sqlValue<number>(db, 'SELECT max(seq) FROM price_feed')) ?? 0;
    },
  };
}

export interface FeedPage {
  items: { seq: number; store_id: string | null; kind: string; approval_id: number }[];
  next_after: number;
}

/**
 * A raw TCP connection to the listener (no TLS, whatever the protocol: a client that never starts its handshake),
 * from `localAddress` (any of 127.0.0.0/8 reaches a listener on 127.0.0.1: another host, as the listener sees it).
 * `closed` resolves with everything received once the listener (or the test) closes it.
 */
export function openSocket(url: string, localAddress?: string): Promise<{ socket: Socket; closed: Promise<string> }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ port: Number(port), host: hostname, localAddress }, () => {
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      const closed = new Promise<string>((done) => socket.on('close', () => done(received)));
      resolve({ socket, closed });
    });
    socket.on('error', () => undefined);
    socket.once('error', reject);
  });
}
