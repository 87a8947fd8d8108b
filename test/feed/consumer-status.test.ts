/**
 * Closing the loop: per consumer and store the offset, the applied seq, the rows not applied and for how long, when
 * it was last seen; the apply deadline flags a store with due prices unapplied too long, logged once per episode.
 */
import { describe, expect, it } from 'vitest';
import { sqlValue } from '../support/state-sql.ts';
import { sha256Hex, type FeedConfig } from '../../src/config/feed-schema.ts';
import { ApplyDeadlineMonitor } from '../../src/feed/apply-deadline.ts';
import { feedOverview } from '../../src/feed/consumer-status.ts';
import { advanceConsumer } from '../../src/store/price-feed.ts';
import { recordApplied, recordLastSeen } from '../../src/store/feed-consumers.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { captureLogger } from '../support/test-logger.ts';
import { approval, deliver, openTempDb } from '../outbox/support.ts';

const A = 'aaaaaaaa-0000-4000-8000-00000000000a';
const B = 'bbbbbbbb-0000-4000-8000-00000000000b';

function consumers(...list: [string, '*' | string[]][]): FeedConfig['consumers'] {
  return list.map(([name, stores]) => ({ name, token_file: null, token_sha256: sha256Hex(name.padEnd(40, '-')), stores }));
}

const MINUTE = 60_000;

async function setUp() {
  const clock = new ManualClock(Date.parse('2026-11-22T10:00:00Z'));
  const db = await openTempDb({ now: () => clock.now() });
  let id = 0;
  const add = (store: string | null, effective: string | null = '2026-11-01') =>
    deliver(db, [approval(++id, { store_id: store, effective_date: effective })]);
  return { clock, db, add };
}

describe('feedOverview', () => {
  it('shows offset, applied seq, lag in rows and seconds, and last seen, per consumer and store', async () => {
    const { clock, db, add } = await setUp();
    await add(A); // seq 1 at 10:00
    await add(null); // 2, product-level
    await clock.advance(10 * MINUTE);
    await add(B); // 3 at 10:10
    await add(A); // 4
    const feed = { listen: '127.0.0.1:9465', tls: null, apply_deadline: '2h', consumers: consumers(['pos-a', [A]], ['pos-b', [B]], ['mw', '*']) };
    await advanceConsumer(db, 'pos-a', 4);
    await recordApplied(db, 'pos-a', A, 2, '2026-11-22T10:05:00Z');
    await recordLastSeen(db, new Map([['pos-a', '2026-11-22T10:09:00.000Z']]));
    await clock.advance(5 * MINUTE); // 10:15
    const overview = await feedOverview(db, feed, clock.now());
    expect(overview).toEqual({
      listen: 'http://127.0.0.1:9465',
      apply_deadline: '2h',
      consumers: [
        { name: 'pos-a', offset: 4, last_seen: '2026-11-22T10:09:00.000Z', stores: [{ store_id: A, applied_seq: 2, lag_rows: 1, lag_seconds: 300 }] },
        { name: 'pos-b', offset: null, last_seen: null, stores: [{ store_id: B, applied_seq: null, lag_rows: 2, lag_seconds: 900 }] },
        {
          name: 'mw',
          offset: null,
          last_seen: null,
          stores: [
            { store_id: A, applied_seq: null, lag_rows: 3, lag_seconds: 900 },
            { store_id: B, applied_seq: null, lag_rows: 2, lag_seconds: 900 },
          ],
        },
      ],
      overdue: [],
    });
    await recordApplied(db, 'pos-a', A, 4, null);
    expect((await feedOverview(db, feed, clock.now())).consumers[0]?.stores).toEqual([{ store_id: A, applied_seq: 4, lag_rows: 0, lag_seconds: 0 }]);
  });

  it('flags a store whose due prices are not applied within the deadline, but not future-dated ones', async () => {
    const { clock, db, add } = await setUp();
    await add(A, '2026-11-22'); // due today
    await add(A, '2026-12-24'); // future: never overdue today
    await add(B, null); // no effective date: due at once
    const feed = { listen: null, tls: null, apply_deadline: '2h', consumers: consumers(['pos-a', [A]], ['pos-b', [B]]) };
    await clock.advance(119 * MINUTE);
    expect((await feedOverview(db, feed, clock.now())).overdue).toEqual([]);
    await clock.advance(1 * MINUTE);
    expect((await feedOverview(db, feed, clock.now())).overdue).toEqual([
      { consumer: 'pos-a', store_id: A, rows: 1, oldest_recorded_at: '2026-11-22T10:00:00.000Z' },
      { consumer: 'pos-b', store_id: B, rows: 1, oldest_recorded_at: '2026-11-22T10:00:00.000Z' },
    ]);
    await recordApplied(db, 'pos-a', A, 1, null); // the due one; the future one stays unapplied, and not overdue
    const after = await feedOverview(db, feed, clock.now());
    expect(after.overdue.map((o) => o.consumer)).toEqual(['pos-b']);
    expect(after.consumers[0]?.stores[0]).toMatchObject({ applied_seq: 1, lag_rows: 1 });
  });

  it('warns once per store while it stays overdue, and says when it caught up', async () => {
    const { clock, db, add } = await setUp();
    const { logger, lines } = captureLogger('info');
    await add(A);
    const feed: FeedConfig = {
      listen: null,
      tls: null,
      consumers: consumers(['pos-a', [A]]),
      apply_deadline: '30m',
      rate_limit: { requests_per_second: 1, burst: 1 },
      max_connections: 10,
      max_connections_per_address: 10,
      max_requests_per_consumer: 8,
    };
    const monitor = new ApplyDeadlineMonitor({ db, feed: () => feed, clock, logger });
    expect((await monitor.check()).overdue).toEqual([]);
    await clock.advance(31 * MINUTE);
    await monitor.check();
    await monitor.check();
    await add(A);
    await monitor.check();
    expect(lines().map((l) => [l['level'], l['msg']])).toEqual([
      ['warn', `store ${A} (pos-a) has not applied 1 due price change(s) within 30m; check the store's POS`],
    ]);
    await recordApplied(db, 'pos-a', A, 2, null);
    await monitor.check();
    await monitor.check();
    expect(lines().map((l) => l['msg']).slice(1)).toEqual(['store has applied its overdue price changes']);
  });

  it('counts every product-level row for every store of many consumers', async () => {
    const { clock, db } = await setUp();
    const stores = Array.from({ length: 300 }, (_, i) => `store-${String(i).padStart(4, '0')}`);
    let id = 0;
    for (let page = 0; page < 10; page += 1) {
      await deliver(db, Array.from({ length: 500 }, (_, i) => approval(++id, { store_id: i % 10 === 0 ? null : (stores[(id + i) % stores.length] ?? null) })));
    }
    const list = consumers(...stores.map((s, i): [string, string[]] => [`pos-${i}`, [s]]));
    for (const [i, store] of stores.entries()) if (i % 15 === 0) await recordApplied(db, `pos-${i}`, store, 2500, null);
    const overview = await feedOverview(db, { listen: null, tls: null, apply_deadline: '2h', consumers: list }, clock.now() + 3 * 3_600_000);
    expect(overview.consumers).toHaveLength(300);
    expect(overview.overdue).toHaveLength(300);
    const rowsOf = (seqFrom: number, store: string | null) =>
      sqlValue<number>(db, 'SELECT count(*) FROM price_feed WHERE seq > ? AND (store_id IS NOT DISTINCT FROM ? OR store_id IS NULL)', [seqFrom, store]);
    for (const [i, c] of overview.consumers.entries()) {
      expect(c.stores[0]?.lag_rows).toBe(await rowsOf(i % 15 === 0 ? 2500 : 0, stores[i] ?? null));
    }
  });
});
