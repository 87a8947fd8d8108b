/**
 * The feed as a POS on another machine meets it: `pricing-agent run` (a child process) serving HTTPS with a
 * self-signed certificate, the sandbox as the platform. Long-polls woken by a one-shot `pricing-agent pull` (another
 * process) and by the daemon's own scheduled pull; the reference client of docs/feed.md applying and confirming;
 * SIGHUP withdrawing a token at once; `status`, `outbox consumers` and /metrics closing the loop; no token anywhere.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sha256Hex } from '../../src/config/feed-schema.ts';
import { docBlock } from '../feed/feed-doc.ts';
import { TLS, TLS_CA } from '../feed/support.ts';
import { daemonHarness, until, untilReady, type DaemonHarness, type DaemonProcess } from '../support/daemon-harness.ts';
import { runCli } from '../support/run-cli.ts';

vi.setConfig({ testTimeout: 90_000, hookTimeout: 60_000 });

const NEVER = '0 0 1 1 *'; // once a year: the pull runs at start-up only, until the reload below
const tokens = { north: 'n'.repeat(16) + sha256Hex('north').slice(0, 48), central: 'c'.repeat(64), south: 's'.repeat(64) };

interface Page {
  items: { seq: number; store_id: string | null; kind: string }[];
  next_after: number;
}

let h: DaemonHarness;
let daemon: DaemonProcess;
let feedUrl: string;
let storeA: string;
let storeB: string;
const dispatcher = new Agent({ allowH2: false, connect: { ca: TLS_CA } });

async function config(schedule: string, withSouth: boolean): Promise<string> {
  const south = withSouth ? `    - name: south\n      token_sha256: ${sha256Hex(tokens.south)}\n      stores: [${storeB}]\n` : '';
  return [
    `api:\n  base_url: ${h.sandbox.url}\n  key_file: ./api-key\n`,
    await h.stateYaml(),
    `http:\n  port: 0\n`,
    `pull:\n  approved_prices:\n    schedule: "${schedule}"\n    reconcile:\n      schedule: "${NEVER}"\n`,
    `feed:\n  listen: 127.0.0.1:0\n  tls:\n    cert_file: ${TLS.cert_file}\n    key_file: ${TLS.key_file}\n`,
    `  consumers:\n    - name: north\n      token_file: ./north.token\n      stores: [${storeA}]\n`,
    `    - name: central\n      token_sha256: ${sha256Hex(tokens.central)}\n      stores: "*"\n`,
    south,
  ].join('');
}

async function feed(path: string, token: string, init: { method?: 'GET' | 'PUT' | 'POST'; body?: unknown } = {}) {
  const res = await request(`${feedUrl}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    dispatcher,
  });
  const text = await res.body.text();
  return { status: res.statusCode, text, json: () => JSON.parse(text) as unknown };
}

async function untilMetric(pattern: RegExp, what: string): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    if (pattern.test((await h.get('/metrics')).body)) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function inject(stores: string[] | null, count: number): void {
  const productLevel = stores === null;
  h.sandbox.control.injectApprovals({ count, product_level_share: productLevel ? 1 : 0, future_share: 0, ...(stores ? { stores } : {}) });
}

beforeAll(async () => {
  h = await daemonHarness({ approvals: 0 });
  [storeA = '', storeB = ''] = h.sandbox.control.state().stores;
  writeFileSync(join(h.dir, 'north.token'), `${tokens.north}\n`, { mode: 0o600 });
  await h.writeConfig(await config(NEVER, true));
  daemon = h.start();
  await untilReady(h);
  feedUrl = /"feed":"(https:\/\/[^"]+)"/.exec(daemon.output())?.[1] ?? '';
  expect(feedUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
});

afterAll(async () => {
  await h.close();
  await dispatcher.close();
});

describe('the feed of a running agent, over HTTPS', () => {
  it('wakes a long-poll on a commit by another process (a one-shot pull), with the rows of its stores only', async () => {
    expect((await feed('/feed/v1/changes', tokens.north)).json()).toEqual({ items: [], next_after: 0 });
    const waiting = feed('/feed/v1/changes?after=0&wait=30', tokens.north);
    inject([storeA], 3);
    inject([storeB], 3);
    inject(null, 2);
    const pull = await runCli(['pull', '--once', '--config', h.configFile]);
    expect(pull.code, pull.stderr).toBe(0);
    const page = (await waiting).json() as Page;
    expect(page.items).toHaveLength(5);
    expect(page.items.every((i) => i.store_id === storeA || i.store_id === null)).toBe(true);
    expect(((await feed('/feed/v1/changes', tokens.central)).json() as Page).items).toHaveLength(8);
  });

  it('runs the reference client of docs/feed.md: it applies the rows, confirms them and commits its offset', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pa-feed-client-'));
    try {
      writeFileSync(join(dir, 'feed-client.mjs'), docBlock('reference-client'));
      const client = spawn(process.execPath, ['feed-client.mjs'], {
        cwd: dir,
        env: { PATH: process.env['PATH'], FEED_URL: feedUrl, FEED_TOKEN: tokens.north, STORE_ID: storeA, NODE_EXTRA_CA_CERTS: TLS.cert_file },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      client.stdout.on('data', (c: Buffer) => (out += c.toString()));
      client.stderr.on('data', (c: Buffer) => (out += c.toString()));
      const exited = new Promise((resolve) => client.on('exit', resolve));
      const north = ((await feed('/feed/v1/changes', tokens.north)).json() as Page).items;
      const last = north.at(-1)?.seq ?? 0;
      const consumers = async () => {
        const status = await runCli(['status', '--offline', '--json', '--config', h.configFile]);
        return (JSON.parse(status.stdout) as { feed: { consumers: { name: string; offset: number | null; stores: { applied_seq: number | null }[] }[] } }).feed.consumers;
      };
      try {
        await until(() => out.split('\n').filter((l) => /^\d+ price /.test(l)).length === north.length, 'the client to apply every row', 20_000);
        let applied: unknown = null;
        for (let i = 0; i < 100 && applied !== last; i += 1) applied = (await consumers()).find((c) => c.name === 'north')?.stores[0]?.applied_seq ?? null;
        expect(applied).toBe(last);
        expect(out).toBe(north.map((r) => `${r.seq} price ${(r as unknown as { item_id: string }).item_id} ${r.store_id ?? 'all stores'} ${(r as unknown as { approved_price: string }).approved_price}\n`).join(''));
      } finally {
        client.kill('SIGTERM');
        await exited;
      }
      expect((await feed('/feed/v1/offset', tokens.north)).json()).toEqual({ offset: last });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('SIGHUP: a removed token stops at once, waiting requests included; the pull of the daemon wakes long-polls', async () => {
    const end = ((await feed('/feed/v1/changes?limit=10000', tokens.central)).json() as Page).next_after;
    const south = feed(`/feed/v1/changes?after=${end}&wait=60`, tokens.south);
    await untilMetric(/^pricing_agent_feed_waiting_requests 1$/m, 'the request to wait');
    await h.writeConfig(await config('* * * * * *', false));
    daemon.child.kill('SIGHUP');
    const revoked = await south;
    expect([revoked.status, revoked.json()]).toEqual([401, { detail: 'the token is not valid for this feed' }]);
    expect((await feed('/feed/v1/offset', tokens.south)).status).toBe(401);
    // The daemon's pull now runs every second. Its commits do not change data_version for its own connection, so
    // only its announcement can wake this request before the wait ends.
    const after = ((await feed('/feed/v1/offset', tokens.north)).json() as { offset: number }).offset;
    await until(() => daemon.output().includes('config reloaded'), 'the reload');
    const waiting = feed(`/feed/v1/changes?after=${after}&wait=30`, tokens.north);
    await untilMetric(/^pricing_agent_feed_waiting_requests 1$/m, 'the request to wait');
    const started = Date.now();
    inject([storeA], 2);
    const page = (await waiting).json() as Page;
    expect(page.items.map((i) => i.store_id)).toEqual([storeA, storeA]);
    expect(Date.now() - started).toBeLessThan(25_000); // well before the 30 s wait
  });

  it('shows consumers and stores in status, outbox consumers and /metrics, and never a token', async () => {
    const [json, text, consumers] = await Promise.all([
      runCli(['status', '--offline', '--json', '--config', h.configFile]),
      runCli(['status', '--offline', '--config', h.configFile]),
      runCli(['outbox', 'consumers', '--json', '--config', h.configFile]),
    ]);
    const report = JSON.parse(json.stdout) as { feed: { consumers: Record<string, unknown>[] } };
    expect(report.feed.consumers.map((c) => c['name'])).toEqual(['north', 'central']);
    for (const c of report.feed.consumers) {
      expect(Object.keys(c)).toEqual(['name', 'offset', 'last_seen', 'stores']);
      for (const s of c['stores'] as Record<string, unknown>[]) expect(Object.keys(s)).toEqual(['store_id', 'applied_seq', 'lag_rows', 'lag_seconds']);
    }
    const north = report.feed.consumers[0] as { last_seen: string | null; stores: { store_id: string; lag_rows: number }[] };
    expect(north.last_seen).not.toBeNull(); // written with its offset and confirmations, at the latest
    expect(north.stores.map((s) => [s.store_id, s.lag_rows])).toEqual([[storeA, 2]]);
    expect(text.stdout).toMatch(new RegExp(`^Feed +${feedUrl.replace(/:\d+$/, ':0')} \\(configured\\); 2 consumers; apply deadline 2h$`, 'm'));
    expect(text.stdout).toMatch(/^ +north: offset \d+, seen \d\d:\d\d; .* applied \d+ \(2 rows not applied, oldest \d+ s\)$/m);
    expect(consumers.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { name: string }).name)).toEqual(['north', 'central']);
    const metrics = await h.get('/metrics');
    expect(metrics.body).toMatch(/^pricing_agent_feed_apply_lag_rows\{consumer="north"\} 2$/m);
    expect(metrics.body).toMatch(/^pricing_agent_feed_requests_total\{consumer="north"\} \d+$/m);
    expect(metrics.body).toMatch(/^pricing_agent_approval_to_outbox_seconds_count [1-9]\d*$/m);
    expect(metrics.body).not.toContain(storeA);
    const everything = [daemon.output(), json.stdout, text.stdout, consumers.stdout, json.stderr, metrics.body].join('\n');
    for (const token of Object.values(tokens)) expect(everything).not.toContain(token);
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
  });

  it('refuses plain HTTP on an address that is not loopback (config validate exits 2)', async () => {
    await h.writeConfig(`api:\n  base_url: ${h.sandbox.url}\n  key_file: ./api-key\nfeed:\n  listen: 0.0.0.0:9465\n`);
    const run = await runCli(['config', 'validate', '--config', h.configFile]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('feed.listen 0.0.0.0:9465 is not a loopback address: set feed.tls');
  });
});
