/**
 * The console's routes on the local HTTP server, without a browser: an agent with no state database yet, the
 * loopback host rule (DNS rebinding), read-only methods, unknown ids, and the helpers every page relies on (markup
 * escaped, times local with their zone, numbers grouped). The pages with data, in Chromium: console-browser.test.ts.
 */
import { mkdir } from 'node:fs/promises';
import { request } from 'node:http';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config/index.ts';
import { consoleHandler } from '../../src/console/console-server.ts';
import { overviewBody } from '../../src/console/overview-page.ts';
import type { FeedOverview } from '../../src/feed/consumer-status.ts';
import type { StatusReport } from '../../src/status/status-report.ts';
import { count, localTimeText } from '../../src/console/format.ts';
import { html } from '../../src/console/html.ts';
import { startHealthServer, type HealthServer } from '../../src/daemon/http-server.ts';
import { createLogger } from '../../src/log.ts';
import { tempDir, writeConfig } from '../config/support.ts';

const servers: HealthServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function agentWithoutState(options: { console?: boolean; host?: string; allowed?: string } = {}): Promise<{ url: string; config: Config }> {
  const dir = tempDir();
  await mkdir(join(dir, 'inbox'));
  const file = writeConfig(
    `api:\n  base_url: https://api.example.com\n  key: svc_live_ConsoleTest000011112222\nstate:\n  dir: ./state\nhttp:\n  host: ${options.host ?? '127.0.0.1'}\n  port: 0\n` +
      `  allowed_hosts: [${options.allowed ?? ''}]\n` +
      `sources:\n  - name: prices\n    entity: product_store\n    path: ./inbox\n`,
    'pricing-agent.yaml',
    dir,
  );
  const config = await loadConfig(file, {}, { logger: createLogger({ level: 'fatal', destination: 2 }) });
  const handler = consoleHandler(
    {
      config: () => config,
      now: () => new Date('2026-11-24T08:00:00Z'),
      readiness: () => ({ ready: false, reasons: ['the API key has not been verified yet'] }),
      agentState: () => 'running',
      readyzUrl: () => null,
      apiKey: () => ({ state: 'skipped', base_url: config.api.base_url }),
    },
    { timeZone: 'Europe/Berlin' },
  );
  const server = await startHealthServer({
    host: config.http.host,
    port: 0,
    readiness: () => ({ ready: false, reasons: [] }),
    registry: new Registry(),
    state: () => 'running',
    allowedHosts: () => config.http.allowed_hosts,
    ...(options.console === false ? {} : { console: handler }),
  });
  servers.push(server);
  return { url: server.url, config };
}

function get(url: string, path: string, init: { method?: string; host?: string } = {}): Promise<{ status: number; type: string; body: string; csp: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, url), { method: init.method ?? 'GET', headers: init.host === undefined ? {} : { host: init.host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body, csp: String(res.headers['content-security-policy']) }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the console on the local HTTP server', () => {
  it('serves an agent that has no state database yet: the sources, and what is missing', async () => {
    const { url } = await agentWithoutState();
    const page = await get(url, '/');
    expect(page.status).toBe(200);
    expect(page.type).toBe('text/html; charset=utf-8');
    expect(page.csp).toContain("default-src 'none'");
    expect(page.body).toContain('data-source="prices"');
    expect(page.body).toContain('State database: missing');
    expect(page.body).toContain('the API key has not been verified yet');
    expect(page.body).toContain('09:00:00 CET'); // 08:00 UTC in Berlin, today: the time alone, with the zone
    expect((await get(url, '/files')).body).toContain('No file matches.');
  });

  it('answers to IP addresses, localhost, this machine and http.allowed_hosts, not to a name someone else points here (DNS rebinding)', async () => {
    for (const listen of ['127.0.0.1', '0.0.0.0']) {
      const { url } = await agentWithoutState({ host: listen, allowed: 'Agent.Store-12.example' });
      const local = url.replace('0.0.0.0', '127.0.0.1');
      const refused = await get(local, '/', { host: 'evil.example:9464' });
      expect(refused.status).toBe(421);
      expect(refused.body).toContain('add that name to http.allowed_hosts');
      expect((await get(local, '/files/1/report.json', { host: 'evil.example' })).status).toBe(421);
      const allowed = ['localhost:9464', '127.0.0.1', '[::1]:9464', '192.168.10.4:9464', '[fe80::1]', hostname(), 'agent.store-12.example:9464'];
      for (const host of allowed) expect((await get(local, '/', { host })).status, host).toBe(200);
      // /healthz, /readyz and /metrics obey the same rule (issue 27 point 11): test/abuse/http-host-header.test.ts.
      expect((await get(local, '/healthz', { host: 'monitor.example' })).status).toBe(421);
      expect((await get(local, '/healthz', { host: 'agent.store-12.example' })).status).toBe(200);
    }
  });

  it('is read-only: GET and HEAD; an unknown file is a 404 page; unknown paths stay the server 404', async () => {
    const { url } = await agentWithoutState();
    expect((await get(url, '/', { method: 'POST' })).status).toBe(405);
    const head = await get(url, '/', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    const missing = await get(url, '/files/42');
    expect(missing.status).toBe(404);
    expect(missing.body).toContain('No file #42 in the ledger.');
    expect((await get(url, '/files/42/report.json')).status).toBe(404);
    const other = await get(url, '/files/../../etc/passwd');
    expect(other.status).toBe(404);
    expect(JSON.parse(other.body)).toEqual({ error: 'not found', endpoints: ['/', '/healthz', '/readyz', '/metrics'] });
  });

  it('http.console: false leaves only the three endpoints', async () => {
    const { url } = await agentWithoutState({ console: false });
    const page = await get(url, '/');
    expect(page.status).toBe(404);
    expect(JSON.parse(page.body)).toEqual({ error: 'not found', endpoints: ['/healthz', '/readyz', '/metrics'] });
  });
});

describe('the feed on the overview (status --json feed, issue 14)', () => {
  const report = (feed: FeedOverview | null) =>
    ({
      generated_at: '2026-11-24T08:00:00Z',
      state_dir: '/s',
      database: { path: '/s/pricing-agent.db', state: 'ok' },
      sources: [],
      processing_files: [],
      held_files: [],
      pull: null,
      outbox: null,
      mirrors: [],
      feed,
      ha: null,
      api_wait: null,
      api_key: { state: 'ok', base_url: 'https://api.example.com' },
      daemon: { state: 'ready', url: null, reasons: [] },
      ok: true,
      problems: [],
    }) as StatusReport;

  it('shows the Retry-After window the API gave, until when and why, and how to end it (issue 27, point 2)', () => {
    expect(overviewBody(report(null), [], {}).text).not.toContain('id="api-wait"');
    const waiting = {
      ...report(null),
      api_wait: {
        until: '2026-11-24T08:15:00.000Z',
        status: 503,
        method: 'GET',
        path: '/v1/approved_prices',
        text: 'the API asked the agent to wait until 2026-11-24T08:15:00.000Z (503 on GET /v1/approved_prices)',
        clear_command: 'pricing-agent api clear-wait',
      },
    };
    const text = overviewBody(waiting, [], {}).text;
    expect(text).toContain('id="api-wait"');
    expect(text).toContain('wait until 2026-11-24T08:15:00.000Z (503 on GET /v1/approved_prices)');
    expect(text).toContain('<code>pricing-agent api clear-wait</code>');
  });

  it('says when it is off, and otherwise shows each consumer, the stores behind, and the ones late past the deadline first', () => {
    expect(overviewBody(report(null), [], {}).text).toContain('The feed is off');
    const page = overviewBody(
      report({
        listen: 'https://0.0.0.0:9465',
        apply_deadline: '2h',
        consumers: [
          {
            name: 'pos-nord',
            offset: 310,
            last_seen: '2026-11-24T07:59:00Z',
            stores: [
              { store_id: 'S-12', applied_seq: 290, lag_rows: 20, lag_seconds: 3 * 3600 },
              { store_id: 'S-13', applied_seq: 310, lag_rows: 0, lag_seconds: 0 },
            ],
          },
        ],
        overdue: [{ consumer: 'pos-nord', store_id: 'S-12', rows: 20, oldest_recorded_at: '2026-11-24T05:00:00Z' }],
      }),
      [],
      { timeZone: 'UTC' },
    ).text;
    const feed = page.slice(page.indexOf('id="feed"'));
    expect(feed).toContain('1 store has not applied prices due for longer than 2h');
    expect(feed).toMatch(/pos-nord, store S-12: 20 rows, the oldest stored <time[^>]*>2026-11-24 05:00:00 UTC<\/time>/);
    expect(feed).toMatch(/data-consumer="pos-nord".*data-label="Offset"><span class="v">310<.*data-label="Rows not applied"><span class="v">20<.*3 h 0 min/s);
    expect(feed).toContain('title="S-12"');
    expect(feed).not.toContain('title="S-13"'); // a store that applied everything is not listed
  });
});

describe('what every page relies on', () => {
  it('escapes every value put into the markup', () => {
    const name = `a<b>&"c"'<img src=x onerror=alert(1)>.csv`;
    expect(html`<td title="${name}">${name}</td>`.text).toBe(
      '<td title="a&lt;b&gt;&amp;&quot;c&quot;&#39;&lt;img src=x onerror=alert(1)&gt;.csv">a&lt;b&gt;&amp;&quot;c&quot;&#39;&lt;img src=x onerror=alert(1)&gt;.csv</td>',
    );
    expect(html`<p>${[html`<b>${'<i>'}</b>`, null, false, undefined, 3]}</p>`.text).toBe('<p><b>&lt;i&gt;</b>3</p>');
  });

  it('writes times in the local zone with its name, and the date unless it is today', () => {
    const now = new Date('2026-11-24T12:00:00Z');
    expect(localTimeText('2026-11-24T08:15:02Z', { timeZone: 'Europe/Berlin', now })).toBe('09:15:02 CET');
    expect(localTimeText('2026-07-01T08:15:02Z', { timeZone: 'Europe/Berlin', now })).toBe('2026-07-01 10:15:02 CEST');
    expect(localTimeText('2026-11-24T23:30:00Z', { timeZone: 'Europe/Berlin', now })).toBe('2026-11-25 00:30:00 CET');
    expect(localTimeText('2026-11-24T08:15:02Z', { timeZone: 'UTC' })).toBe('2026-11-24 08:15:02 UTC');
    expect(localTimeText('2026-11-24T08:15:02Z', { timeZone: 'Asia/Kolkata' })).toBe('2026-11-24 13:45:02 GMT+5:30');
    expect(localTimeText(null)).toBe('–');
    expect(count(48210)).toBe('48,210');
    expect(count(null)).toBe('–');
  });
});
