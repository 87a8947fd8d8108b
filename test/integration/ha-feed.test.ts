/**
 * The feed on the standby of an HA pair (issue 15, docs/ha.md "The feed on a standby"): two `pricing-agent run`
 * processes on one PostgreSQL state, both serving the feed.
 *
 * - A till's long-poll waiting on the standby is answered with the rows the active node committed (the standby
 *   notices the shared feed growing), and /current on the standby shows them.
 * - The till's own writes on the standby (PUT /offset, POST /applied) are stored in the shared state, and the active
 *   node answers with them: they are the consumer's bookkeeping, not the agent's work, which the standby never does
 *   (it sent nothing to the platform).
 * - With the active node killed and no node active yet, the standby's feed still answers.
 *
 * The postgres project only (HA needs the state in PostgreSQL).
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/config/feed-schema.ts';
import { haPairPerTest, readyz, untilActive, type HaNode } from '../support/ha-pair.ts';
import { TEST_BACKEND } from '../support/state-db.ts';
import { until } from '../support/test-logger.ts';

/** Long enough that the standby is certainly not active yet in the seconds after the active's death. */
const LEASE_S = 10;
const TOKEN = 't'.repeat(64);
const SOURCES = '  - name: tx\n    entity: transactions\n    path: ./inbox/tx\n';
const EXTRA = [
  // The active pulls every second; the reconciliation never runs during the test.
  `pull:\n  approved_prices:\n    schedule: "* * * * * *"\n    reconcile:\n      schedule: "0 0 1 1 *"\n`,
  `feed:\n  listen: 127.0.0.1:0\n  consumers:\n    - name: till\n      token_sha256: ${sha256Hex(TOKEN)}\n      stores: "*"\n`,
].join('');

interface Page {
  items: { seq: number; store_id: string | null }[];
  next_after: number;
}

/** The feed's address of the node's current process (from its running line). */
function feedUrl(n: HaNode): string {
  const url = /"feed":"(http:\/\/[^"]+)"/.exec(n.output())?.[1];
  if (url === undefined) throw new Error(`${n.name} has not reported its feed address`);
  return url;
}

async function feed(n: HaNode, path: string, init: { method?: 'GET' | 'PUT' | 'POST'; body?: unknown } = {}) {
  const res = await request(`${feedUrl(n)}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    headersTimeout: 60_000,
  });
  const text = await res.body.text();
  return { status: res.statusCode, text, json: <T>() => JSON.parse(text) as T };
}

const openPair = haPairPerTest();

describe.runIf(TEST_BACKEND === 'postgres')('the feed of an HA pair', () => {
  it('the standby serves the rows the active committed, stores the till offset and confirmations, and answers with no active', async () => {
    const { harness, a, b } = await openPair({ approvals: 0 }, { leaseS: LEASE_S, sources: SOURCES, extra: EXTRA });
    a.start();
    await untilActive(a);
    b.start();
    await until(async () => (await readyz(b)).status === 200, 'node-b ready', 60_000);
    expect((await readyz(b)).role).toBe('standby');

    // A till waits on the standby; the active pulls new approvals and commits them to the shared feed.
    expect((await feed(b, '/feed/v1/changes')).json<Page>()).toEqual({ items: [], next_after: 0 });
    const waiting = feed(b, '/feed/v1/changes?after=0&wait=30');
    const [store] = harness.sandbox.control.state().stores;
    harness.sandbox.control.injectApprovals({ count: 4, product_level_share: 0, future_share: 0, stores: [store ?? ''] });
    const page = (await waiting).json<Page>();
    expect(page.items).toHaveLength(4);
    const last = page.items.at(-1)?.seq ?? 0;
    expect(page.next_after).toBe(last);
    const current = (await feed(b, `/feed/v1/current?store=${store ?? ''}`)).json<{ seq: number; items: unknown[] }>();
    expect(current.seq).toBe(last);
    expect(current.items).toHaveLength(4);

    // The till's own writes on the standby are stored, and the active node answers with them.
    expect((await feed(b, '/feed/v1/offset', { method: 'PUT', body: { seq: last } })).json()).toEqual({ offset: last });
    expect((await feed(b, '/feed/v1/applied', { method: 'POST', body: { store_id: store, seq: last } })).status).toBe(204);
    expect((await feed(a, '/feed/v1/offset')).json()).toEqual({ offset: last });
    expect(await harness.stateValue<number>('SELECT applied_seq FROM feed_applied WHERE consumer = ? AND store_id = ?', ['till', store ?? ''])).toBe(last);
    expect(b.proxy.log).toEqual([]); // the standby did none of the agent's work

    // The active dies: before the standby takes over (its lease runs for seconds more), the feed still answers.
    a.signal('SIGKILL');
    await a.exited();
    expect(await readyz(b)).toMatchObject({ status: 200, role: 'standby' });
    const meanwhile = await feed(b, '/feed/v1/changes');
    expect(await readyz(b)).toMatchObject({ status: 200, role: 'standby' }); // no node was active meanwhile
    expect(meanwhile.status).toBe(200);
    expect(meanwhile.json<Page>()).toEqual({ items: [], next_after: last });
  }, 120_000);
});
