/**
 * Issue 27 point 11 (DNS rebinding): a web page on another site points a DNS name of its own at the agent's machine
 * and lets the visitor's browser fetch the local HTTP server under that name. The console already refused such a
 * Host; /healthz, /readyz and /metrics answered it (readiness reasons, source names and counts in the metrics).
 * A real daemon (`pricing-agent run`) is asked with a foreign Host header, then with names that are this machine's.
 */
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { daemonHarnessPerTest } from '../support/daemon-harness.ts';

const openHarness = daemonHarnessPerTest();

function get(url: string, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, url), { headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the local HTTP server against DNS rebinding', () => {
  it('refuses /healthz, /readyz and /metrics to a Host that is not this machine, as the console pages', async () => {
    const h = await openHarness();
    const daemon = await h.startReady(
      await h.configYaml(
        `log:\n  level: info\n`,
        `http:\n  port: 0\n  allowed_hosts: [monitor.store-12.example]\n`,
        `sources:\n  - name: tx\n    entity: transactions\n    path: ./inbox/tx\n`,
      ),
    );
    const url = h.httpUrl();
    expect(url).not.toBe('');
    for (const path of ['/healthz', '/readyz', '/metrics', '/', '/nothing-here']) {
      const refused = await get(url, path, 'rebind.attacker.example:9464');
      expect(refused.status, path).toBe(421);
      expect(refused.body, path).toContain('to reach it as rebind.attacker.example:9464, add that name to http.allowed_hosts');
      expect(refused.body, path).not.toMatch(/ready|pricing_agent_|tx/);
    }
    for (const host of [new URL(url).host, 'localhost:9464', 'monitor.store-12.example:9464']) {
      expect((await get(url, '/healthz', host)).status, host).toBe(200);
      expect((await get(url, '/readyz', host)).status, host).toBe(200);
      const metrics = await get(url, '/metrics', host);
      expect(metrics.status, host).toBe(200);
      expect(metrics.body).toContain('pricing_agent_');
    }
    expect(await daemon.stop()).toBe(0);
  });
});
