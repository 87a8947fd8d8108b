/**
 * Issue 27, point 6: one till cannot take the feed from the others. Two tokens asking `changes?limit=10000` without
 * reading the answers took the agent from 0.2 to 2.7 GB, and the agent kept working for clients long gone. Answers
 * are now written slice by slice as the client reads them (the bytes one answer holds are bounded), a consumer has
 * at most `feed.max_requests_per_consumer` requests in progress, and an answer whose client went away is not
 * produced any further.
 *
 * Memory is measured by the listener's own accounting (bytes written but not yet taken by each consumer's sockets),
 * not by RSS. Real sockets: a client that reads nothing is a socket paused after its request.
 */
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ANSWER_BUFFER_BOUND } from '../../src/feed/consumer-load.ts';
import { abuseSize } from '../support/abuse.ts';
import { until } from '../support/test-logger.ts';
import { type FeedHarness, feedHarness, openSocket, STORE_A, STORE_B, testConsumer, type TestConsumer } from '../feed/support.ts';

const ROWS = abuseSize(2_500, 10_000);
/** Rows of about 8 KB: a page of ROWS is about 20 MB (80 MB in full), more than loopback's socket buffers hold. */
const LONG = 'L'.repeat(4_000);
const ROW_BYTES = 2 * LONG.length;

/** A client that sends `path` and reads nothing of the answer. */
async function stalledRequest(h: FeedHarness, consumer: TestConsumer, path: string): Promise<Socket> {
  const { socket } = await openSocket(h.url);
  socket.pause();
  socket.write(`GET ${path} HTTP/1.1\r\nHost: feed\r\nAuthorization: Bearer ${consumer.token}\r\n\r\n`);
  return socket;
}

describe('feed consumers that read nothing', () => {
  it('hold a bounded number of bytes each, and a third till is still served', async () => {
    const [a, b, till] = [testConsumer('a', [STORE_A]), testConsumer('b', [STORE_A]), testConsumer('till', [STORE_B])];
    const h = await feedHarness('http', [a, b, till]);
    await h.append(Array.from({ length: ROWS }, () => STORE_A), { item_id: LONG, sku: LONG });
    const sockets = [await stalledRequest(h, a, '/feed/v1/changes?after=0&limit=10000'), await stalledRequest(h, b, '/feed/v1/changes?after=0&limit=10000')];
    // Once the socket buffers are full, the rest of each answer waits in the listener (or, now, is not made yet).
    await until(() => h.server.bufferedBytes('a') > 0 && h.server.bufferedBytes('b') > 0, 'both answers to fill their sockets');
    expect((await h.call('GET', '/feed/v1/offset', { token: till.token })).status).toBe(200);
    for (const name of ['a', 'b']) {
      expect(h.server.bufferedBytes(name)).toBeLessThanOrEqual(ANSWER_BUFFER_BOUND);
      expect(h.server.producedBytes(name)).toBeLessThan((ROWS * ROW_BYTES) / 2); // not serialized ahead of its reader
    }
    for (const socket of sockets) socket.destroy();
  }, 60_000); // 20 MB of rows to write first, on a loaded machine

  it('stops producing an answer when its client goes away', async () => {
    const a = testConsumer('a', [STORE_A]);
    const h = await feedHarness('http', [a]);
    await h.append(Array.from({ length: ROWS }, () => STORE_A), { item_id: LONG, sku: LONG });
    const socket = await stalledRequest(h, a, '/feed/v1/changes?after=0&limit=10000');
    await until(() => h.server.bufferedBytes('a') > 0, 'the answer to fill the socket');
    socket.destroy();
    await until(() => h.server.inProgress('a') === 0, 'the listener to see the client gone');
    const produced = h.server.producedBytes('a');
    for (let turn = 0; turn < 20; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(h.server.producedBytes('a')).toBe(produced);
    expect(produced).toBeLessThan((ROWS * ROW_BYTES) / 2);
  }, 60_000);
});

describe('a store snapshot nobody reads', () => {
  it('holds a bounded number of bytes, and is not made further once its client is gone', async () => {
    const a = testConsumer('a', [STORE_A]);
    const h = await feedHarness('http', [a]);
    await h.append(Array.from({ length: ROWS }, () => STORE_A), { sku: LONG + LONG }); // ROWS items of about 8 KB
    const socket = await stalledRequest(h, a, `/feed/v1/current?store=${STORE_A}`);
    await until(() => h.server.bufferedBytes('a') > 0, 'the answer to fill the socket');
    expect(h.server.bufferedBytes('a')).toBeLessThanOrEqual(ANSWER_BUFFER_BOUND);
    socket.destroy();
    await until(() => h.server.inProgress('a') === 0, 'the listener to see the client gone');
    expect(h.server.producedBytes('a')).toBeLessThan((ROWS * ROW_BYTES) / 2);
  }, 60_000);
});

describe('feed requests in progress per consumer', () => {
  it('answers 429 beyond feed.max_requests_per_consumer, for that consumer only', async () => {
    const [a, b] = [testConsumer('a', [STORE_A]), testConsumer('b', [STORE_A])];
    const h = await feedHarness('http', [a, b], { config: { max_requests_per_consumer: 2 } });
    const polls = [new AbortController(), new AbortController()];
    const waiting = polls.map((poll) => h.call('GET', '/feed/v1/changes?after=0&wait=60', { token: a.token, signal: poll.signal }).catch(() => null));
    await until(() => h.server.waiting === 2, 'both long-polls to wait');
    const refused = await h.call('GET', '/feed/v1/offset', { token: a.token });
    expect([refused.status, refused.headers['retry-after'], refused.json()]).toEqual([
      429,
      '1',
      { detail: 'a has 2 requests in progress (feed.max_requests_per_consumer); retry after 1 s' },
    ]);
    expect((await h.call('GET', '/feed/v1/offset', { token: b.token })).status).toBe(200);
    polls[0]?.abort();
    await until(() => h.server.inProgress('a') === 1, 'the aborted long-poll to end');
    expect((await h.call('GET', '/feed/v1/offset', { token: a.token })).status).toBe(200);
    polls[1]?.abort();
    await Promise.all(waiting);
  });
});
