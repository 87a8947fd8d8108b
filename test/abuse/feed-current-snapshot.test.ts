/**
 * Issue 27, point 6: a till with a valid token asks for a large store's `/feed/v1/current`. The snapshot was read in
 * one query: on SQLite (synchronous) that held the event loop for the whole read, so another till's `/offset` went
 * from 3 ms to 2 s, and every row of the store was in memory at once. It is now read in pages by item
 * (store-snapshot.ts), each a separate short read, with the event loop and the database connection free between them.
 *
 * No timing: the test watches the feed's reads of approved_prices (a proxy of the database handle), checks that no
 * read returns more than a page, and has another till's request go through between two pages of the snapshot (the
 * second page is read only once that request was answered: it cannot be while a read, or anything held across the
 * reads, blocks the loop or the connection).
 */
import { describe, expect, it } from 'vitest';
import type { StateDb } from '../../src/store/state-db.ts';
import { SNAPSHOT_PAGE_VERSIONS } from '../../src/store/store-snapshot.ts';
import { abuseSize } from '../support/abuse.ts';
import { type Answer, type FeedHarness, feedHarness, STORE_A, STORE_B, testConsumer } from '../feed/support.ts';
import { openTempDb } from '../outbox/support.ts';

const ROWS = abuseSize(5_000, 300_000);
/** Versions per deliveries page when filling the store. */
const FILL_PAGE = 10_000;

interface Watch {
  /** Runs before each read of approved_prices (awaited: the read waits for it). */
  before(read: number): Promise<void> | void;
  /** The rows each read returned, in order. */
  readonly rows: number[];
}

/** Rows in a read's result: an array's, or the arrays' of an object (a snapshot read in one transaction). */
function rowsIn(result: unknown): number {
  if (Array.isArray(result)) return result.length;
  if (typeof result !== 'object' || result === null) return 0;
  return Object.values(result).reduce<number>((sum, value) => sum + (Array.isArray(value) ? value.length : 0), 0);
}

/**
 * `db` with its reads (`all`, and `read` for several statements in one transaction) of approved_prices watched. The
 * handle is the same object underneath (the store's `sqlOf` accepts the proxy; every method runs on the real handle).
 */
function watched(db: StateDb, watch: Watch): StateDb {
  return new Proxy(db, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const method = (value as (...args: unknown[]) => unknown).bind(target);
      if (property !== 'all' && property !== 'read') return method;
      return async (...args: unknown[]) => {
        const snapshotRead = property === 'read' || (typeof args[0] === 'string' && args[0].includes('approved_prices'));
        if (!snapshotRead) return method(...args);
        await watch.before(watch.rows.length);
        const result = await method(...args);
        watch.rows.push(rowsIn(result));
        return result;
      };
    },
  });
}

describe("a large store's /current", () => {
  it('is read in pages, and another till is answered between two of them', async () => {
    const [till, other] = [testConsumer('till', [STORE_A]), testConsumer('other', [STORE_B])];
    const events: string[] = [];
    let harness: FeedHarness | null = null;
    let otherAnswer: Promise<Answer> | null = null;
    let watching = false;
    const watch: Watch = {
      rows: [],
      async before(read) {
        if (!watching) return;
        events.push(`read ${read}`);
        if (read === 0 && harness !== null) {
          const h = harness;
          otherAnswer = h.call('GET', '/feed/v1/offset', { token: other.token }).then((answer) => {
            events.push('other answered');
            return answer;
          });
        }
        if (read === 1) await otherAnswer; // the second page waits for the other till: it must get through now
      },
    };
    const h = await feedHarness('http', [till, other], { db: watched(await openTempDb(), watch) });
    harness = h;
    for (let done = 0; done < ROWS; done += FILL_PAGE) await h.append(Array.from({ length: Math.min(FILL_PAGE, ROWS - done) }, () => STORE_A));
    watching = true;

    const answer = await h.call('GET', `/feed/v1/current?store=${STORE_A}`, { token: till.token });
    expect(answer.status).toBe(200);
    expect((answer.json() as { items: unknown[] }).items).toHaveLength(ROWS);
    expect(otherAnswer).not.toBeNull();
    expect((await (otherAnswer as unknown as Promise<Answer>)).status).toBe(200);
    // The other till was answered while the snapshot was being read: a read of it came after that answer.
    const answeredAt = events.indexOf('other answered');
    expect(answeredAt).toBeGreaterThan(0);
    expect(events.slice(answeredAt + 1).some((event) => event.startsWith('read '))).toBe(true);
    // No read returned more than a page (one item's two prices past it at most), and the store took many reads.
    expect(Math.max(...watch.rows)).toBeLessThanOrEqual(SNAPSHOT_PAGE_VERSIONS + 1);
    expect(watch.rows.filter((rows) => rows > 0).length).toBeGreaterThanOrEqual(Math.ceil(ROWS / (SNAPSHOT_PAGE_VERSIONS + 1)));
  }, 120_000);
});
