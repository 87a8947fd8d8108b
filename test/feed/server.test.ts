/**
 * The feed API against the real listener, over HTTP and over HTTPS (a self-signed certificate): tokens, store scopes,
 * the three formats, long-polls woken by commits (of this process and of another connection), offsets that never move
 * back, confirmations of application, errors as {"detail": ...}, the rate limit, and what a reload does to a token.
 */
import { describe, expect, it } from 'vitest';
import { sqlRows, sqlValue } from '../support/state-sql.ts';
import { databaseId } from '../../src/store/meta.ts';
import { approval, deliver, reopenTempDb } from '../outbox/support.ts';
import { until } from '../support/test-logger.ts';
import { type FeedPage, feedConfig, feedHarness, type Protocol, STORE_A, STORE_B, STORE_C, testConsumer } from './support.ts';

const north = testConsumer('pos-north', [STORE_A]);
const south = testConsumer('pos-south', [STORE_B, STORE_C]);
const central = testConsumer('central', '*');
const consumers = [north, south, central];

describe.each<Protocol>(['http', 'https'])('feed API over %s', (protocol) => {
  it('answers 401 without a valid token, and never echoes a token', async () => {
    const h = await feedHarness(protocol, consumers);
    expect(h.url.startsWith(`${protocol}://127.0.0.1:`)).toBe(true);
    const missing = await h.call('GET', '/feed/v1/changes', { token: null });
    expect(missing.status).toBe(401);
    expect(missing.json()).toEqual({ detail: 'send Authorization: Bearer <token>' });
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="pricing-agent feed"');
    const wrongToken = `${north.token.slice(0, -4)}beef`;
    const wrong = await h.call('GET', '/feed/v1/changes', { token: wrongToken });
    expect(wrong.status).toBe(401);
    expect(wrong.json()).toEqual({ detail: 'the token is not valid for this feed' });
    expect((await h.call('GET', '/feed/v1/nothing')).status).toBe(404);
    const method = await h.call('DELETE', '/feed/v1/offset');
    expect([method.status, method.headers['allow']]).toEqual([405, 'GET, PUT']);
    const ok = await h.call('GET', '/feed/v1/changes');
    expect(ok.status).toBe(200);
    expect(ok.headers['feed-database-id']).toBe(await databaseId(h.db));
    const warnings = JSON.parse(h.logText()) as { level: string; msg: string }[];
    expect(warnings.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual([
      'a feed request came from 127.0.0.1 without a token (401); check that client\'s token (logged once an hour per address)',
    ]);
    for (const text of [missing.text, wrong.text, ok.text, h.logText()]) {
      for (const c of consumers) expect(text).not.toContain(c.token);
      expect(text).not.toContain(wrongToken);
    }
  });

  it('hands each consumer the rows of its stores and every product-level row, in seq order, page by page', async () => {
    const h = await feedHarness(protocol, consumers);
    await h.append([STORE_A, STORE_B, null, STORE_C, STORE_A, STORE_B, null]);
    await h.append([STORE_B], { cancelled_at: '2026-11-22T09:00:00Z' }); // delivered cancelled: its withdrawal
    const page = async (token: string, query: string) => {
      const answer = await h.call('GET', `/feed/v1/changes${query}`, { token });
      expect(answer.status).toBe(200);
      return answer.json() as FeedPage;
    };
    const seen = (p: FeedPage) => p.items.map((i) => [i.seq, i.store_id, i.kind]);
    const northPage = await page(north.token, '');
    expect(seen(northPage)).toEqual([[1, STORE_A, 'price'], [3, null, 'price'], [5, STORE_A, 'price'], [7, null, 'price']]);
    expect(northPage.next_after).toBe(8); // the agent looked up to 8: nothing more of north's after 7
    expect(seen(await page(south.token, ''))).toEqual([
      [2, STORE_B, 'price'], [3, null, 'price'], [4, STORE_C, 'price'], [6, STORE_B, 'price'], [7, null, 'price'],
      [8, STORE_B, 'withdrawal'],
    ]);
    expect((await page(central.token, '')).items).toHaveLength(8);
    const first = await page(south.token, '?limit=3');
    expect([first.items.map((i) => i.seq), first.next_after]).toEqual([[2, 3, 4], 4]);
    const second = await page(south.token, `?after=${first.next_after}&limit=3`);
    expect([second.items.map((i) => i.seq), second.next_after]).toEqual([[6, 7, 8], 8]);
    expect(second.items.at(-1)?.kind).toBe('withdrawal');
    const end = await page(south.token, '?after=8');
    expect(end).toEqual({ items: [], next_after: 8 });
    // Every column of price_feed, as docs/outbox.md lists them.
    expect(Object.keys((await page(north.token, '?limit=1')).items[0] ?? {})).toEqual([
      'seq', 'kind', 'approval_id', 'predecessor_id', 'item_id', 'sku', 'store_id', 'approved_price', 'currency_code',
      'effective_date', 'recorded_at',
    ]);
  });

  it('speaks NDJSON and CSV when asked by Accept, and refuses what it cannot speak', async () => {
    const h = await feedHarness(protocol, consumers);
    await h.append([STORE_A, STORE_B, null]);
    const ndjson = await h.call('GET', '/feed/v1/changes', { accept: 'application/x-ndjson' });
    expect(ndjson.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(ndjson.headers['feed-next-after']).toBe('3');
    expect(ndjson.text.trimEnd().split('\n').map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual([1, 3]);
    const csv = await h.call('GET', '/feed/v1/changes', { accept: 'text/csv;q=0.9, application/xml' });
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    const lines = csv.text.split('\r\n');
    expect(lines[0]).toBe('seq,kind,approval_id,predecessor_id,item_id,sku,store_id,approved_price,currency_code,effective_date,recorded_at');
    expect(lines[1]).toMatch(new RegExp(`^1,price,1,,ITEM-1,SKU-1,${STORE_A},10.49,EUR,2026-11-01,2026-11-22T10:00:00.000Z$`));
    expect(lines[2]?.startsWith('3,price,3,,ITEM-3,SKU-3,,10.49')).toBe(true);
    const empty = await h.call('GET', '/feed/v1/changes?after=3', { accept: 'text/csv' });
    expect([empty.text, empty.headers['feed-next-after']]).toEqual([`${lines[0]}\r\n`, '3']);
    const refused = await h.call('GET', '/feed/v1/changes', { accept: 'application/xml' });
    expect(refused.status).toBe(406);
  });

  it('refuses bad parameters with 422 and says what is wrong', async () => {
    const h = await feedHarness(protocol, consumers);
    await h.append([STORE_A]);
    for (const [query, detail] of [
      ['?after=-1', 'after must be an integer from 0'],
      ['?after=abc', 'after must be an integer from 0'],
      ['?after=1.5', 'after must be an integer from 0'],
      ['?limit=10001', 'limit must be an integer from 0 to 10000'],
      ['?limit=0', 'limit must be an integer from 1 to 10000'],
      ['?wait=61', 'wait must be a number of seconds from 0 to 60'],
      ['?wait=soon', 'wait must be a number of seconds'],
      ['?after=2', 'after 2 is beyond the last seq of the feed (1)'],
    ] as const) {
      const answer = await h.call('GET', `/feed/v1/changes${query}`);
      expect(answer.status, query).toBe(422);
      expect((answer.json() as { detail: string }).detail, query).toContain(detail);
    }
    expect((await h.call('GET', '/feed/v1/changes?limit=10000&after=0&wait=0')).status).toBe(200);
  });

  it('long-polls: answers as soon as a row of its stores is committed, not for other stores, and empty when the wait ends', async () => {
    const h = await feedHarness(protocol, consumers);
    await h.append([STORE_A]);
    const waiting = h.call('GET', '/feed/v1/changes?after=1&wait=30');
    await until(() => h.server.waiting === 1, 'the long-poll to wait');
    await h.append([STORE_B, STORE_C]); // not north's stores: it keeps waiting
    await until(async () => h.server.waiting === 1 && (await sqlValue(h.db, 'SELECT max(seq) FROM price_feed')) === 3, 'commit');
    await new Promise((r) => setImmediate(r));
    expect(h.server.waiting).toBe(1);
    await h.append([STORE_A]);
    const answer = await waiting;
    expect((answer.json() as FeedPage).items.map((i) => i.seq)).toEqual([4]);
    // A wait that sees no row ends with an empty page when its time is up (the injected clock moves it).
    const timedOut = h.call('GET', '/feed/v1/changes?after=4&wait=20');
    await until(() => h.server.waiting === 1, 'the long-poll to wait');
    await h.clock.advance(20_000);
    expect((await timedOut).json()).toEqual({ items: [], next_after: 4 });
    // A product-level row wakes every consumer.
    const polls = [north, south, central].map((c) => h.call('GET', '/feed/v1/changes?after=4&wait=30', { token: c.token }));
    await until(() => h.server.waiting === 3, 'three long-polls to wait');
    await h.append([null]);
    for (const poll of polls) expect(((await poll).json() as FeedPage).items.map((i) => i.seq)).toEqual([5]);
  });

  it('long-polls are woken by a commit of another process (another connection to the database file)', async () => {
    const h = await feedHarness(protocol, consumers);
    await h.append([STORE_A]);
    const other = await reopenTempDb(h.db);
    const waiting = h.call('GET', '/feed/v1/changes?after=1&wait=30');
    await until(() => h.server.waiting === 1, 'the long-poll to wait');
    await deliver(other, [approval(9001, { store_id: STORE_A })]); // nothing announces it in this process: the change marker does
    expect(((await waiting).json() as FeedPage).items.map((i) => i.approval_id)).toEqual([9001]);
  });

  it('GET /current: the prices of one of its stores in force and upcoming, with the seq they reflect', async () => {
    const h = await feedHarness(protocol, consumers);
    await h.append([STORE_A], { item_id: 'I-1', effective_date: '2026-11-01', approved_price: '1.00' });
    await h.append([null], { item_id: 'I-2', effective_date: '2026-11-10', approved_price: '2.00' });
    await h.append([STORE_A], { item_id: 'I-1', effective_date: '2026-12-24', approved_price: '0.90' });
    await h.append([STORE_B], { item_id: 'I-1', effective_date: '2026-11-01', approved_price: '1.10' });
    const answer = await h.call('GET', `/feed/v1/current?store=${STORE_A}`);
    expect(answer.status).toBe(200);
    const body = answer.json() as { store_id: string; seq: number; date: string; items: unknown[]; upcoming: unknown[] };
    expect(body).toMatchObject({
      store_id: STORE_A,
      seq: 4,
      items: [
        { item_id: 'I-1', store_id: STORE_A, approved_price: '1.00', effective_date: '2026-11-01' },
        { item_id: 'I-2', store_id: null, approved_price: '2.00' },
      ],
      upcoming: [{ item_id: 'I-1', store_id: STORE_A, approved_price: '0.90', effective_date: '2026-12-24' }],
    });
    expect(body.items).toHaveLength(2);
    expect(body.date).toMatch(/^2026-11-2[12]$/); // the agent's local date
    expect((await h.call('GET', `/feed/v1/current?store=${STORE_B}`)).status).toBe(403);
    expect((await h.call('GET', `/feed/v1/current`)).status).toBe(422);
    expect((await h.call('GET', `/feed/v1/current?store=${STORE_B}`, { token: central.token })).status).toBe(200);
  });

  it('PUT /offset moves the committed offset forward only; /changes starts from it', async () => {
    const h = await feedHarness(protocol, consumers);
    await h.append([STORE_A, STORE_A, STORE_A]);
    expect((await h.call('GET', '/feed/v1/offset')).json()).toEqual({ offset: null });
    expect((await h.call('PUT', '/feed/v1/offset', { body: { seq: 2 } })).json()).toEqual({ offset: 2 });
    expect(((await h.call('GET', '/feed/v1/changes')).json() as FeedPage).items.map((i) => i.seq)).toEqual([3]);
    const back = await h.call('PUT', '/feed/v1/offset', { body: { seq: 1 } });
    expect([back.status, back.json()]).toEqual([200, { offset: 2 }]);
    const beyond = await h.call('PUT', '/feed/v1/offset', { body: { seq: 4 } });
    expect([beyond.status, beyond.json()]).toEqual([422, { detail: 'seq 4 is beyond the last seq of the feed (3)' }]);
    expect((await h.call('PUT', '/feed/v1/offset', { body: { seq: -1 } })).status).toBe(422);
    expect((await h.call('PUT', '/feed/v1/offset', { body: 'seq=3' })).status).toBe(400);
    expect((await h.call('PUT', '/feed/v1/offset', { body: { seq: 3 } })).json()).toEqual({ offset: 3 });
    // The offset is the consumer's row of consumer_offsets, which `status` and SQL readers see.
    expect(await sqlValue(h.db, 'SELECT last_seq FROM consumer_offsets WHERE consumer = ?', ['pos-north'])).toBe(3);
  });

  it('POST /applied records per store the seq applied (204), never backwards, only for its own stores', async () => {
    const h = await feedHarness(protocol, consumers);
    await h.append([STORE_B, STORE_C, STORE_B]);
    const post = (body: unknown, token = south.token) => h.call('POST', '/feed/v1/applied', { token, body });
    const ok = await post({ store_id: STORE_B, seq: 3, applied_at: '2026-11-22T10:05:00+01:00' });
    expect([ok.status, ok.text]).toEqual([204, '']);
    expect((await post({ store_id: STORE_B, seq: 1, applied_at: '2026-11-22T10:06:00Z' })).status).toBe(204);
    expect((await post({ store_id: STORE_C, seq: 2 })).status).toBe(204);
    expect((await post({ store_id: STORE_A, seq: 1 })).status).toBe(403);
    expect((await post({ store_id: STORE_A, seq: 1 }, north.token)).status).toBe(204);
    expect((await post({ store_id: STORE_B, seq: 4 })).status).toBe(422);
    const badTime = await post({ store_id: STORE_B, seq: 3, applied_at: 'yesterday' });
    expect([badTime.status, (badTime.json() as { detail: string }).detail]).toEqual([422, 'applied_at: Input should be a valid datetime']);
    expect((await post({ seq: 3 })).status).toBe(422);
    // A consumer of every store confirms the stores the feed has rows of; a made-up one would stay in status for good.
    expect((await post({ store_id: STORE_C, seq: 2 }, central.token)).status).toBe(204);
    const madeUp = await post({ store_id: 'no-such-store-1', seq: 2 }, central.token);
    expect([madeUp.status, (madeUp.json() as { detail: string }).detail]).toEqual([422, "store no-such-store-1 has no row of its own in the feed: a consumer of every store confirms the stores it read prices of (a store with product-level prices only: list it in the consumer's stores)"]);
    const rows = await sqlRows(h.db, 'SELECT consumer, store_id, applied_seq, applied_at FROM feed_applied ORDER BY consumer, store_id');
    expect(rows).toEqual([
      { consumer: 'central', store_id: STORE_C, applied_seq: 2, applied_at: null },
      { consumer: 'pos-north', store_id: STORE_A, applied_seq: 1, applied_at: null },
      { consumer: 'pos-south', store_id: STORE_B, applied_seq: 3, applied_at: '2026-11-22T10:05:00+01:00' },
      { consumer: 'pos-south', store_id: STORE_C, applied_seq: 2, applied_at: null },
    ]);
  });

  it('limits the rate per token (429 with Retry-After) and records when each consumer was last seen', async () => {
    const h = await feedHarness(protocol, consumers, { config: { rate_limit: { requests_per_second: 1, burst: 3 } } });
    for (let i = 0; i < 3; i += 1) expect((await h.call('GET', '/feed/v1/offset')).status).toBe(200);
    const limited = await h.call('GET', '/feed/v1/offset');
    expect([limited.status, limited.headers['retry-after']]).toEqual([429, '1']);
    expect((await h.call('GET', '/feed/v1/offset', { token: south.token })).status).toBe(200); // its own bucket
    await h.clock.advance(1_000);
    expect((await h.call('GET', '/feed/v1/offset')).status).toBe(200);
    await h.server.flushLastSeen();
    const seen = await sqlRows(h.db, 'SELECT consumer, last_seen_at FROM feed_consumers ORDER BY consumer');
    expect(seen).toEqual([
      { consumer: 'pos-north', last_seen_at: '2026-11-22T10:00:01.000Z' },
      { consumer: 'pos-south', last_seen_at: '2026-11-22T10:00:00.000Z' },
    ]);
  });

  it('a reload that removes a token stops it at once, waiting long-polls included; a new token works at once', async () => {
    const h = await feedHarness(protocol, consumers);
    await h.append([STORE_A]);
    const waiting = h.call('GET', '/feed/v1/changes?after=1&wait=60');
    const stillWaiting = h.call('GET', '/feed/v1/changes?after=1&wait=60', { token: south.token });
    await until(() => h.server.waiting === 2, 'two long-polls to wait');
    const newcomer = testConsumer('pos-new', [STORE_A]);
    await h.server.reconfigure(feedConfig(protocol, [south, central, newcomer]));
    const revoked = await waiting;
    expect([revoked.status, revoked.json()]).toEqual([401, { detail: 'the token is not valid for this feed' }]);
    expect((await h.call('GET', '/feed/v1/offset')).status).toBe(401);
    expect(h.server.waiting).toBe(1);
    expect((await h.call('GET', '/feed/v1/changes', { token: newcomer.token })).status).toBe(200);
    // South's scope loses store B: its wait goes on under the new scope, and a row of C wakes it.
    await h.server.reconfigure(feedConfig(protocol, [{ ...south, stores: [STORE_C] }, central]));
    await h.append([STORE_B]);
    await until(async () => (await sqlValue(h.db, 'SELECT max(seq) FROM price_feed')) === 2, 'commit');
    await h.append([STORE_C]);
    expect(((await stillWaiting).json() as FeedPage).items.map((i) => i.store_id)).toEqual([STORE_C]);
  });

  it('answers waiting long-polls with an empty page when it closes', async () => {
    const h = await feedHarness(protocol, consumers);
    const waiting = h.call('GET', '/feed/v1/changes?wait=60');
    await until(() => h.server.waiting === 1, 'the long-poll to wait');
    await h.server.close();
    const answer = await waiting;
    expect([answer.status, answer.json(), answer.headers['connection']]).toEqual([200, { items: [], next_after: 0 }, 'close']);
  });
});
