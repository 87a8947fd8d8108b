/**
 * The README is the user's manual: its quick start comes first, its links (and those of docs/) lead somewhere, the
 * metrics table it links (docs/operations.md) names exactly the metrics the agent exports, and the files the
 * installation steps copy exist.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentMetrics } from '../../src/daemon/metrics.ts';
import { markdownPages, readRepoFile, repoFile } from './support.ts';

const README = readRepoFile('README.md');

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\w\- ]/g, '')
    .replaceAll(' ', '-');
}

function headingsOf(markdown: string): Set<string> {
  return new Set([...markdown.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#+ (.+)$/gm)].map((m) => anchor(m[1] ?? '')));
}

const MARKDOWN = markdownPages();

describe('README.md', () => {
  it.each(MARKDOWN)('%s links only to headings and files that exist', (page) => {
    const text = readRepoFile(page);
    for (const [, file = '', target] of text.matchAll(/\]\(([^)#:\s]*)(?:#([^)\s]+))?\)/g)) {
      const path = file === '' ? page : join(dirname(page), file);
      expect(existsSync(repoFile(path)), `${page}: ${file}`).toBe(true);
      if (target !== undefined) expect(headingsOf(readRepoFile(path)), `${page}: ${file}#${target}`).toContain(target);
    }
  });

  it('starts with the quick start: the two set-up commands first in its first sh block, all on one screen', () => {
    const quickStart = README.slice(README.indexOf('\n## Quick start\n'), README.indexOf('\n## ', README.indexOf('\n## Quick start\n') + 1));
    expect(README.indexOf('\n## Quick start\n')).toBe(README.indexOf('\n## '));
    const block = /```sh\n([\s\S]*?)```/.exec(quickStart)?.[1] ?? '';
    expect(block.split('\n').slice(0, 2).map((line) => line.replace(/\s+#.*$/, ''))).toEqual([
      '. scripts/use-node.sh && npm ci && node src/cli/main.ts demo',
      'npm test',
    ]);
    expect(README.slice(0, README.indexOf('\n## ', README.indexOf('\n## Quick start\n') + 1)).split('\n').length).toBeLessThanOrEqual(40);
  });

  it('docs/operations.md lists every metric of the agent (without the Node.js process metrics), and no other', async () => {
    const metrics = new AgentMetrics({ outbox: () => Promise.resolve({ feedRows: 0, consumers: [] }), mirrors: () => Promise.resolve([]), ready: () => true, heldFiles: () => Promise.resolve([]) });
    const exported = (await metrics.registry.getMetricsAsJSON())
      .map((m) => m.name)
      .filter((name) => !/^pricing_agent_(process|nodejs)_/.test(name));
    const documented = [...readRepoFile('docs/operations.md').matchAll(/^\| `(pricing_agent_[a-z_]+)` \|/gm)].map((m) => m[1]);
    expect([...documented].sort()).toEqual([...exported].sort());
  });

  it('names files of the installation steps that exist (docs/deployment.md)', () => {
    const deployment = readRepoFile('docs/deployment.md');
    for (const file of ['systemd/pricing-agent.sysusers', 'systemd/pricing-agent.service', 'systemd/pricing-agent-cli', 'systemd/pricing-agent.yaml']) {
      expect(deployment).toContain(file);
      expect(existsSync(repoFile(file)), file).toBe(true);
    }
  });
});
