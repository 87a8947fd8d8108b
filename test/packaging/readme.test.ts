/**
 * The README is the user's manual: its links lead somewhere, its metrics table names exactly the metrics the agent
 * exports, and the files its installation steps copy exist.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AgentMetrics } from '../../src/daemon/metrics.ts';
import { readRepoFile, repoFile } from './support.ts';

const README = readRepoFile('README.md');

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\w\- ]/g, '')
    .replaceAll(' ', '-');
}

describe('README.md', () => {
  it('links only to headings and files that exist', () => {
    const headings = new Set([...README.matchAll(/^#+ (.+)$/gm)].map((m) => anchor(m[1] ?? '')));
    for (const [, target] of README.matchAll(/\]\(#([^)]+)\)/g)) expect(headings, `#${target}`).toContain(target);
    for (const [, file] of README.matchAll(/\]\(([^)#:]+)\)/g)) expect(existsSync(repoFile(file ?? '')), file).toBe(true);
  });

  it('lists every metric of the agent (without the Node.js process metrics), and no other', async () => {
    const metrics = new AgentMetrics({ outbox: () => Promise.resolve({ feedRows: 0, consumers: [] }), mirrors: () => [], ready: () => true });
    const exported = (await metrics.registry.getMetricsAsJSON())
      .map((m) => m.name)
      .filter((name) => !/^pricing_agent_(process|nodejs)_/.test(name));
    const documented = [...README.matchAll(/^\| `(pricing_agent_[a-z_]+)` \|/gm)].map((m) => m[1]);
    expect([...documented].sort()).toEqual([...exported].sort());
  });

  it('names files of the installation steps that exist', () => {
    for (const file of ['systemd/pricing-agent.sysusers', 'systemd/pricing-agent.service', 'systemd/pricing-agent-cli', 'systemd/pricing-agent.yaml']) {
      expect(README).toContain(file);
      expect(existsSync(repoFile(file)), file).toBe(true);
    }
  });
});
