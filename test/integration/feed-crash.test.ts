/**
 * Crash safety of the feed: a till (this test, as a POS would) reads its store's rows from `pricing-agent run` (a
 * child process), confirms them and commits its offset, while the daemon is SIGKILLed and SIGSTOPped:
 *   1. right after a confirmation was answered: the offset and the applied seq it was told are there after a restart;
 *   2. with a confirmation in flight: the agent keeps either the old or the new offset, never less, never between;
 *   3. in the middle of a pull (a long-poll answered by its first page, more pages to come): the pull resumes;
 *   4. stopped while a long-poll waits, as another process (a one-shot pull) commits: the wait is answered with those
 *      rows once the daemon runs again, and a stale confirmation sent meanwhile never moves the offset back;
 *   5. stopped, then killed (systemd's stop timeout): what was sent to the stopped daemon was never recorded.
 * Throughout, the till reads from the agent's offset (no `after` of its own): no row at or below an offset the agent
 * acknowledged is served again, no row of another store is served, a row served twice is the same row. At the end
 * the till holds every approval of its store and every product-level one, each once in the feed, and `status`
 * shows its offset and applied seq at the end of its feed.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sha256Hex } from '../../src/config/feed-schema.ts';
import { daemonHarness, untilReady, type DaemonHarness, type DaemonProcess } from '../support/daemon-harness.ts';
import { runCli } from '../support/run-cli.ts';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const EVERY_SECOND = '* * * * * *';
const NEVER = '0 0 1 1 *';
const tokens = { till: 't'.repeat(64), central: 'c'.repeat(64) };

interface Row {
  seq: number;
  kind: string;
  approval_id: number;
  store_id: string | null;
}

interface Page {
  items: Row[];
  next_after: number;
}

interface Answer {
  status: number;
  json: () => unknown;
}

let h: DaemonHarness;
let daemon: DaemonProcess;
let storeA = '';
let storeB = '';
/** Every approval injected for the till's store or for every store: what the till must end up with. */
const expected = new Set<number>();

function config(schedule: string): string {
  return [
    `api:\n  base_url: ${h.sandbox.url}\n  key_file: ./api-key\n`,
    `state:\n  dir: ./state\n`,
    `http:\n  port: 0\n`,
    `pull:\n  approved_prices:\n    schedule: "${schedule}"\n    page_size: 50\n    reconcile:\n      schedule: "${NEVER}"\n`,
    `feed:\n  listen: 127.0.0.1:0\n  consumers:\n`,
    `    - name: till\n      token_sha256: ${sha256Hex(tokens.till)}\n      stores: [${storeA}]\n`,
    `    - name: central\n      token_sha256: ${sha256Hex(tokens.central)}\n      stores: "*"\n`,
  ].join('');
}

function inject(stores: string[] | null, count: number): void {
  const rows = h.sandbox.control.injectApprovals({ count, product_level_share: stores === null ? 1 : 0, future_share: 0, ...(stores ? { stores } : {}) });
  for (const row of rows) if (row['store_id'] === storeA || row['store_id'] === null) expected.add(row['id'] as number);
}

function feedUrl(): string {
  const url = /"feed":"(http:\/\/[^"]+)"/.exec(daemon.output())?.[1];
  if (!url) throw new Error('the daemon has not reported its feed address');
  return url;
}

async function call(token: string, method: 'GET' | 'PUT' | 'POST', path: string, body?: unknown, timeoutMs = 60_000): Promise<Answer> {
  const res = await request(`${feedUrl()}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: () => JSON.parse(text) as unknown };
}

async function startDaemon(): Promise<void> {
  daemon = h.start();
  await untilReady(h);
}

async function kill(signal: 'SIGKILL'): Promise<void> {
  daemon.child.kill(signal);
  expect((await daemon.exited).signal).toBe(signal);
}

async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function metric(line: RegExp): Promise<boolean> {
  return line.test((await h.get('/metrics')).body);
}

/** The till's offset and its store's applied seq, as `status` (another process) reads them from the state database. */
async function statusOfTill(): Promise<{ offset: number | null; applied_seq: number | null; lag_rows: number }> {
  const run = await runCli(['status', '--offline', '--json', '--config', h.configFile]);
  const report = JSON.parse(run.stdout) as { feed: { consumers: { name: string; offset: number | null; stores: { applied_seq: number | null; lag_rows: number }[] }[] } };
  const till = report.feed.consumers.find((c) => c.name === 'till');
  const store = till?.stores[0];
  if (!till || !store) throw new Error(`status shows no till: ${run.stdout}`);
  return { offset: till.offset, applied_seq: store.applied_seq, lag_rows: store.lag_rows };
}

/** A POS of store A that keeps no offset of its own: it reads from the agent's, applies, confirms, commits. */
const till = {
  /** The offset the agent last acknowledged (200). */
  committed: 0,
  /** The applied seq the agent last acknowledged (204). */
  confirmed: 0,
  rows: new Map<number, Row>(),
  servedAgain: 0,

  async read(waitSeconds: number, limit = 25): Promise<Page> {
    const answer = await call(tokens.till, 'GET', `/feed/v1/changes?limit=${limit}&wait=${waitSeconds}`);
    expect(answer.status).toBe(200);
    const page = answer.json() as Page;
    for (const row of page.items) {
      expect(row.seq, 'a row at or below the offset the agent acknowledged was served again').toBeGreaterThan(this.committed);
      expect([storeA, null], 'a row of another store').toContain(row.store_id);
      const before = this.rows.get(row.seq);
      if (before) {
        expect(row).toEqual(before);
        this.servedAgain += 1;
      }
      this.rows.set(row.seq, row);
    }
    return page;
  },

  async confirm(seq: number): Promise<void> {
    const applied = await call(tokens.till, 'POST', '/feed/v1/applied', { store_id: storeA, seq, applied_at: new Date().toISOString() });
    expect(applied.status).toBe(204);
    this.confirmed = Math.max(this.confirmed, seq);
    const offset = await call(tokens.till, 'PUT', '/feed/v1/offset', { seq });
    expect(offset.status).toBe(200);
    this.committed = (offset.json() as { offset: number }).offset;
    expect(this.committed).toBeGreaterThanOrEqual(seq);
  },

  /** Reads, applies and confirms page by page until it holds `count` approvals of `expected`. */
  async catchUp(count: number): Promise<void> {
    const deadline = Date.now() + 60_000;
    while (this.approvals().size < count) {
      if (Date.now() > deadline) throw new Error(`the till has ${this.approvals().size} of ${count} approvals`);
      const page = await this.read(5);
      if (page.items.length > 0) await this.confirm(page.next_after);
    }
  },

  approvals(): Set<number> {
    return new Set([...this.rows.values()].filter((r) => r.kind === 'price').map((r) => r.approval_id));
  },
};

beforeAll(async () => {
  h = await daemonHarness({ approvals: 0 });
  [storeA = '', storeB = ''] = h.sandbox.control.state().stores;
  await h.writeConfig(config(EVERY_SECOND));
  await startDaemon();
});

afterAll(async () => {
  await h.close();
});

describe('the feed across crashes of the daemon', () => {
  it('SIGKILL after a confirmation, during one and in the middle of a pull: nothing confirmed is lost or served again', async () => {
    inject([storeA], 40);
    inject([storeB], 40);
    inject(null, 20);
    await till.catchUp(60);

    // 1. Killed right after the agent acknowledged a confirmation.
    const acknowledged = { offset: till.committed, applied: till.confirmed };
    await kill('SIGKILL');
    await startDaemon();
    expect((await call(tokens.till, 'GET', '/feed/v1/offset')).json()).toEqual({ offset: acknowledged.offset });
    expect(await statusOfTill()).toMatchObject({ offset: acknowledged.offset, applied_seq: acknowledged.applied });

    // 2. Killed with a confirmation in flight: the agent keeps the old offset or the new one.
    inject([storeA], 30);
    const page = await till.read(10, 10);
    expect(page.items.length).toBeGreaterThan(0);
    const inFlight = [
      call(tokens.till, 'POST', '/feed/v1/applied', { store_id: storeA, seq: page.next_after }),
      call(tokens.till, 'PUT', '/feed/v1/offset', { seq: page.next_after }),
    ].map((p) => p.catch(() => null));
    await new Promise((r) => setImmediate(r));
    await kill('SIGKILL');
    await Promise.all(inFlight);
    await startDaemon();
    const kept = (await call(tokens.till, 'GET', '/feed/v1/offset')).json() as { offset: number };
    expect([acknowledged.offset, page.next_after]).toContain(kept.offset);
    const status = await statusOfTill();
    expect([acknowledged.applied, page.next_after]).toContain(status.applied_seq);
    till.committed = kept.offset;
    await till.catchUp(90);

    // 3. Killed in the middle of a pull: the first page of six woke the long-poll, five are still to come.
    h.sandbox.control.setFaults({ latency_ms: 400, paths: ['POST /v1/approved_prices/deliveries'] });
    const woken = till.read(30, 1000);
    await eventually(() => metric(/^pricing_agent_feed_waiting_requests 1$/m), 'the long-poll to wait');
    inject([storeA], 150);
    inject(null, 50);
    inject([storeB], 100);
    const first = await woken;
    await kill('SIGKILL');
    h.sandbox.control.setFaults(null);
    expect(first.items.length).toBeGreaterThan(0);
    expect(first.items.length).toBeLessThan(200);
    await startDaemon();
    await till.catchUp(expected.size);
    expect(till.approvals()).toEqual(expected);
  });

  it('SIGSTOP while a long-poll waits and another process commits; then stopped and killed: nothing lost, nothing moved back', async () => {
    // The daemon's own pull runs at start only, so that nothing of it is caught mid-transaction by the stop.
    await h.writeConfig(config(NEVER));
    await kill('SIGKILL');
    await startDaemon();
    await eventually(() => metric(/^pricing_agent_job_runs_total\{job="approved_prices_reconcile",outcome="success"\} 1$/m), 'the reconciliation at start');
    await eventually(() => metric(/^pricing_agent_job_runs_total\{job="approved_prices",outcome="success"\} 1$/m), 'the pull at start');

    // 4. Stopped while the till waits; a one-shot pull commits rows of its store meanwhile.
    const waiting = till.read(30, 1000);
    await eventually(() => metric(/^pricing_agent_feed_waiting_requests 1$/m), 'the long-poll to wait');
    daemon.child.kill('SIGSTOP');
    const before = till.committed;
    // A stale confirmation (a retry of an old one) sent now is answered once the daemon runs again, and moves nothing.
    const stale = call(tokens.till, 'PUT', '/feed/v1/offset', { seq: 1 });
    inject([storeA], 12);
    const pull = await runCli(['pull', '--once', '--config', h.configFile]);
    expect(pull.code, pull.stderr).toBe(0);
    daemon.child.kill('SIGCONT');
    const page = await waiting;
    expect(page.items.filter((r) => r.store_id === storeA)).toHaveLength(12);
    const staleAnswer = await stale;
    expect([staleAnswer.status, staleAnswer.json()]).toEqual([200, { offset: before }]);
    expect((await call(tokens.till, 'GET', '/feed/v1/offset')).json()).toEqual({ offset: before });
    await till.confirm(page.next_after);
    expect(till.committed).toBe(page.next_after);

    // 5. Stopped, sent a confirmation, killed: the confirmation never reached the database.
    inject([storeA], 5);
    const pull2 = await runCli(['pull', '--once', '--config', h.configFile]);
    expect(pull2.code, pull2.stderr).toBe(0);
    const unconfirmed = await till.read(0, 1000);
    expect(unconfirmed.items).toHaveLength(5);
    daemon.child.kill('SIGSTOP');
    const lost = await call(tokens.till, 'PUT', '/feed/v1/offset', { seq: unconfirmed.next_after }, 500).then(() => 'answered', (e: Error) => e.name);
    expect(lost).toBe('TimeoutError');
    await kill('SIGKILL');
    await startDaemon();
    expect((await call(tokens.till, 'GET', '/feed/v1/offset')).json()).toEqual({ offset: till.committed });
    const again = await till.read(0, 1000);
    expect(again.items.map((r) => r.seq)).toEqual(unconfirmed.items.map((r) => r.seq)); // served again: never confirmed
    await till.confirm(again.next_after);

    // The end state: every approval of the till's scope once in the feed, in the till, confirmed.
    const all = (await call(tokens.central, 'GET', '/feed/v1/changes?after=0&limit=10000')).json() as Page;
    const prices = all.items.filter((r) => r.kind === 'price').map((r) => r.approval_id);
    expect(new Set(prices).size).toBe(prices.length);
    const scope = all.items.filter((r) => r.store_id === storeA || r.store_id === null);
    expect([...till.rows.keys()].sort((a, b) => a - b)).toEqual(scope.map((r) => r.seq));
    expect(till.approvals()).toEqual(expected);
    const last = scope.at(-1)?.seq ?? 0;
    expect(await statusOfTill()).toEqual({ offset: last, applied_seq: last, lag_rows: 0 });
    expect(till.servedAgain).toBeGreaterThanOrEqual(5);
    await daemon.stop();
  });
});
