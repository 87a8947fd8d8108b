/**
 * Attack (issue 27, point 3): the API server (or whatever answers at api.base_url) sends a body without end, or
 * drips it. A 3 GB body on /v1/auth/verify took `check` past 8 GB of memory; a server that drips one byte every two
 * seconds held a pull forever, because api.timeout_ms is a gap between chunks. Now a body is read up to
 * api.max_response_bytes while it streams (the client stops reading, so the server cannot push more than the socket
 * buffers take), and a whole attempt ends by api.attempt_deadline_ms; both are a failed attempt for the retry policy,
 * with a message that names the config key.
 *
 * Sizes: abuseSize (a few tens of MB inside `npm test`, gigabytes under `npm run test:abuse`). Nothing here asserts
 * on time: the drip is cut by a small deadline, and the assertions are on the error and the bytes the server got out.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { API_ERROR_CODES } from '../../src/api/errors.ts';
import { abuseSize } from '../support/abuse.ts';
import { drive, ManualClock } from '../support/manual-clock.ts';
import { runCli } from '../support/run-cli.ts';
import { startScriptedServer } from '../support/scripted-server.ts';

const KEY = 'svc_live_ResponseAbuse0000111122223333444455';
const MiB = 1024 * 1024;
const dispatcher = new Agent({ allowH2: false });

interface Hostile {
  url: string;
  /** Requests received. */
  requests: number;
  /** Body bytes the server got written into sockets, all responses together. */
  written: number;
  /** Resolves once every response the server started has ended or its connection closed. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

let hostile: Hostile | null = null;
afterEach(async () => {
  await hostile?.close();
  hostile = null;
});
afterAll(() => dispatcher.close());

/** A server whose every answer is a 200 JSON head and then `body(res)` (which counts what it writes). */
async function startHostile(body: (res: ServerResponse, count: (n: number) => void) => void, headers: Record<string, string> = {}): Promise<Hostile> {
  let open = 0;
  let wake: (() => void) | null = null;
  const state = { requests: 0, written: 0 };
  const server: Server = createServer((req, res) => {
    state.requests += 1;
    open += 1;
    res.on('close', () => {
      open -= 1;
      if (open === 0) wake?.();
    });
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json', ...headers });
    body(res, (n) => (state.written += n));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get requests() {
      return state.requests;
    },
    get written() {
      return state.written;
    },
    idle: () => (open === 0 ? Promise.resolve() : new Promise<void>((resolve) => (wake = resolve))),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Writes `total` bytes of a JSON string that never ends, as fast as the client reads (backpressure). */
function endless(total: number) {
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  return (res: ServerResponse, count: (n: number) => void) => {
    let sent = 0;
    res.write('{"ok":true,"padding":"');
    const pump = () => {
      while (sent < total && !res.destroyed) {
        sent += chunk.length;
        count(chunk.length);
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      if (!res.destroyed) res.end('"}');
    };
    pump();
  };
}

/** One byte every 50 ms, for ever (until the client goes). */
function drip(res: ServerResponse, count: (n: number) => void): void {
  const timer = setInterval(() => {
    if (res.destroyed) return clearInterval(timer);
    count(1);
    res.write(' ');
  }, 50);
  res.on('close', () => clearInterval(timer));
}

function client(url: string, more: Partial<ConstructorParameters<typeof ApiClient>[0]> = {}): ApiClient {
  return new ApiClient({ baseUrl: url, apiKey: KEY, dispatcher, random: () => 0, maxAttempts: 1, ...more });
}

describe('api.max_response_bytes: a body without end', () => {
  const total = abuseSize(48 * MiB, 3 * 1024 * MiB);

  it(`stops reading at the limit: ${total / MiB} MiB sent as fast as read, the limit 1 MiB`, { timeout: 120_000 }, async () => {
    hostile = await startHostile(endless(total));
    const failed = client(hostile.url, { maxResponseBytes: MiB }).auth.verify();
    await expect(failed).rejects.toMatchObject({ code: 'API_RESPONSE_LIMIT', limitCode: 'RESPONSE_TOO_LARGE' });
    await expect(failed).rejects.toThrow(/larger than api\.max_response_bytes \(1048576 bytes\)/);
    await hostile.idle(); // the connection was closed: the server cannot push more
    // What the server got out is the limit plus what socket buffers hold, not the body it meant to send.
    expect(hostile.written).toBeLessThan(16 * MiB);
  });

  it('refuses a body announced larger than the limit before reading it', { timeout: 120_000 }, async () => {
    const announced = abuseSize(48 * MiB, 3 * 1024 * MiB);
    hostile = await startHostile(endless(announced), { 'content-length': String(announced + 24) });
    const failed = client(hostile.url, { maxResponseBytes: MiB }).auth.verify();
    await expect(failed).rejects.toMatchObject({ code: 'API_RESPONSE_LIMIT', limitCode: 'RESPONSE_TOO_LARGE' });
    await hostile.idle();
    expect(hostile.written).toBeLessThan(16 * MiB);
  });

  it('the default limit (64 MiB) holds against a larger body too', { timeout: 300_000 }, async () => {
    const big = abuseSize(80 * MiB, 1024 * MiB);
    hostile = await startHostile(endless(big));
    const failed = client(hostile.url).auth.verify();
    await expect(failed).rejects.toThrow(/larger than api\.max_response_bytes \(67108864 bytes\)/);
    await hostile.idle();
    expect(hostile.written).toBeLessThan(80 * MiB);
  });
});

describe('api.attempt_deadline_ms: a server that drips', () => {
  it('ends the attempt however the bytes are paced, and names the limit', { timeout: 30_000 }, async () => {
    hostile = await startHostile(drip);
    const failed = client(hostile.url, { attemptDeadlineMs: 400 }).auth.verify();
    await expect(failed).rejects.toMatchObject({ code: 'API_RESPONSE_LIMIT', limitCode: 'ATTEMPT_DEADLINE' });
    await expect(failed).rejects.toThrow(/did not complete within api\.attempt_deadline_ms \(400 ms/);
    await hostile.idle(); // the connection is closed, not left dripping
  });

  it('counts as a failed attempt for the retry policy: an idempotent GET is tried again, up to the attempts allowed', { timeout: 30_000 }, async () => {
    hostile = await startHostile(drip);
    const clock = new ManualClock();
    const failed = drive(clock, client(hostile.url, { attemptDeadlineMs: 300, maxAttempts: 3, clock }).auth.verify());
    await expect(failed).rejects.toMatchObject({ code: 'API_RESPONSE_LIMIT' });
    expect(hostile.requests).toBe(3);
    expect(clock.sleeps.slice(0, 2)).toEqual([1000, 2000]); // the document's backoff between them
  });
});

describe('the limits from the config, through `check`', () => {
  async function configFor(url: string): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'pa-abuse-responses-'));
    const file = join(dir, 'pricing-agent.yaml');
    await writeFile(
      file,
      `api:\n  base_url: ${url}\n  key: ${KEY}\n  max_response_bytes: 1048576\n  attempt_deadline_ms: 1000\nstate:\n  dir: ${join(dir, 'state')}\n`,
    );
    return file;
  }

  it('a huge body on /v1/auth/verify: check fails with one sentence naming api.max_response_bytes', { timeout: 120_000 }, async () => {
    hostile = await startHostile(endless(abuseSize(48 * MiB, 3 * 1024 * MiB)));
    const run = await runCli(['check', '--no-retry', '--config', await configFor(hostile.url)]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/larger than api\.max_response_bytes \(1048576 bytes\)/);
    expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
    await hostile.idle();
    expect(hostile.written).toBeLessThan(16 * MiB);
  });

  it('a dripping server: check fails naming api.attempt_deadline_ms', { timeout: 60_000 }, async () => {
    hostile = await startHostile(drip);
    const run = await runCli(['check', '--no-retry', '--config', await configFor(hostile.url)]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/did not complete within api\.attempt_deadline_ms \(1000 ms/);
  });
});

describe('bulk results that break "one entry per input row, in index order"', () => {
  it('a short or reordered list of results is refused as a bad response, not read as rows written', async () => {
    const rows = [{ transaction_id: 'T1', item_id: 'I1', transaction_timestamp: '2026-11-20T08:00:00Z' }, { transaction_id: 'T2', item_id: 'I1', transaction_timestamp: '2026-11-20T08:00:00Z' }];
    const answers = [
      { results: [{ index: 0, ok: true, id: 'a' }] },
      { results: [{ index: 1, ok: true, id: 'b' }, { index: 0, ok: true, id: 'a' }] },
    ];
    for (const body of answers) {
      const server = await startScriptedServer([{ reply: 200, body }]);
      try {
        const client = new ApiClient({ baseUrl: server.url, apiKey: KEY, dispatcher, clock: new ManualClock() });
        await expect(client.transactions.bulk(rows)).rejects.toMatchObject({ code: API_ERROR_CODES.badResponse });
        expect(server.received).toHaveLength(1);
      } finally {
        await server.close();
      }
    }
  });
});
