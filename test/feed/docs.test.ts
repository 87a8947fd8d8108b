/**
 * docs/feed.md stays true: its Prometheus alert rules load in promtool and name metrics the agent exports, every
 * feed metric it names exists, and its reference client is the short program it says it is (the client itself runs
 * against the agent in test/integration/feed-daemon.test.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentMetrics } from '../../src/daemon/metrics.ts';
import { docBlock, FEED_DOC as DOC } from './feed-doc.ts';
import { skipWithout } from '../support/required-tool.ts';

const noPromtool = skipWithout('promtool', spawnSync('promtool', ['--version']).status === 0, 'prometheus');

async function exportedMetrics(): Promise<Set<string>> {
  const metrics = new AgentMetrics({ outbox: () => Promise.resolve({ feedRows: 0, consumers: [] }), mirrors: () => Promise.resolve([]), ready: () => true });
  return new Set((await metrics.registry.getMetricsAsJSON()).map((m) => m.name));
}

describe('docs/feed.md', () => {
  it.skipIf(noPromtool)('has alert rules that promtool accepts', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pa-feed-rules-'));
    try {
      writeFileSync(join(dir, 'rules.yaml'), `${docBlock('alert-rules')}\n`);
      const result = spawnSync('promtool', ['check', 'rules', join(dir, 'rules.yaml')], { encoding: 'utf8' });
      expect(result.stdout + result.stderr).toContain('SUCCESS: 2 rules found');
      expect(result.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names only metrics the agent exports', async () => {
    const exported = await exportedMetrics();
    const named = new Set([...DOC.matchAll(/\bpricing_agent_[a-z_]+/g)].map((m) => m[0]));
    expect(named.size).toBeGreaterThan(10);
    for (const name of named) expect(exported, name).toContain(name);
  });

  it('has a reference client of about thirty lines', () => {
    const client = docBlock('reference-client').split('\n');
    expect(client.length).toBeLessThanOrEqual(36);
    expect(client.join('\n')).toContain("'/feed/v1/applied'");
  });
});
