/**
 * The demo runs in CI and checks its own summary: `pricing-agent demo --json` as a child process, exactly as a person
 * runs it (no config, no network but loopback), must exit 0 well under a minute with every check passed, and the
 * paths it points to must be there. Then the commands it suggests work on the folder it kept.
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invokedAs } from '../../src/cli/commands/demo-text.ts';
import type { DemoSummary } from '../../src/demo/demo-summary.ts';
import type { StatusReport } from '../../src/status/status-report.ts';
import { runCli, type CliRun } from '../support/run-cli.ts';

const DEMO_BUDGET_MS = 60_000;
let dir: string;
let demoDir: string;
let run: CliRun;
let elapsedMs: number;
let summary: DemoSummary & { kept: boolean };

const exists = (path: string) => stat(path).then(() => true, () => false);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pa-demo-'));
  demoDir = join(dir, 'demo');
  const started = Date.now();
  run = await runCli(['demo', '--json', '--dir', demoDir], {}, dir);
  elapsedMs = Date.now() - started;
  summary = JSON.parse(run.stdout) as DemoSummary & { kept: boolean };
}, DEMO_BUDGET_MS + 10_000);

afterAll(() => rm(dir, { recursive: true, force: true }));

describe('pricing-agent demo', () => {
  it('exits 0 well under a minute, with every check of its summary passed', () => {
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(elapsedMs).toBeLessThan(DEMO_BUDGET_MS);
    expect(summary.checks.filter((c) => !c.ok)).toEqual([]);
    expect(summary.checks.length).toBeGreaterThanOrEqual(10);
    expect(summary.ok).toBe(true);
    expect(summary.kept).toBe(true);
    expect(summary.dir).toBe(demoDir);
  });

  it('pushed the four sample files with the expected rows, and pulled the approvals into the outbox and store files', () => {
    expect(summary.files.map((f) => [f.source, f.status, f.rows_read, f.rows_accepted, f.rows_rejected])).toEqual([
      ['erp-products', 'done', 40, 40, 0],
      ['erp-store-prices', 'done', 240, 240, 0],
      ['pos-transactions', 'done', 301, 300, 1],
      ['competitor-prices', 'done', 60, 60, 0],
    ]);
    const a = summary.approvals;
    expect(a).toMatchObject({ ack_pending: 0, conflicts: 0, amended: 5, cancelled: 3, new_after_first_pull: 20 });
    expect(a.acknowledged).toBe(a.stored);
    expect(a.stored).toBeGreaterThan(280);
    expect(summary.outbox.withdrawals).toBe(3);
    expect(summary.store_files.reduce((n, s) => n + s.rows, 0)).toBe(summary.outbox.feed_rows);
    expect(summary.daemon.state).toBe('ready');
  });

  it('points at paths that exist: reports, the rejects CSV with the bad row, the outbox database, store files', async () => {
    const p = summary.paths;
    expect(p.reports).toHaveLength(4);
    for (const path of [...p.reports, p.database, p.store_files, p.config, p.log]) expect(await exists(path), path).toBe(true);
    expect(p.rejects).toHaveLength(1);
    const rejects = await readFile(p.rejects[0] ?? '', 'utf8');
    expect(rejects).toContain('T-BAD-1');
    expect(rejects).toContain('gestern 17:30');
    expect(p.example_query).toContain(p.database);
    const key = (await readFile(join(demoDir, 'api-key'), 'utf8')).trim();
    expect(run.stdout).not.toContain(key);
    expect(await readFile(p.log, 'utf8')).not.toContain(key);
  });

  it('leaves a folder that status and files read afterwards (offline)', async () => {
    const [status, files] = await Promise.all([
      runCli(['status', '--json', '--offline', '--config', summary.paths.config]),
      runCli(['files', 'list', '--json', '--status', 'done', '--config', summary.paths.config]),
    ]);
    expect(status.code).toBe(0);
    const report = JSON.parse(status.stdout) as StatusReport;
    expect(report.sources.map((s) => [s.name, s.done_today, s.waiting])).toEqual(summary.files.map((f) => [f.source, 1, 0]));
    expect(report.outbox?.feed_rows).toBe(summary.outbox.feed_rows);
    expect(JSON.parse(files.stdout)).toHaveLength(4);
  });

  describe('--dir', () => {
    let busy: string;
    beforeAll(async () => {
      busy = join(dir, 'busy');
      await mkdir(busy);
      await writeFile(join(busy, 'keep.txt'), 'mine\n');
    });

    it('refuses a folder that is not empty (exit 2), and leaves it alone', async () => {
      const refused = await runCli(['demo', '--dir', busy]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/is not empty/);
      expect(await readFile(join(busy, 'keep.txt'), 'utf8')).toBe('mine\n');
    });

    it('refuses a folder it cannot make or write with one sentence (exit 2), not the stack trace of its log file', async () => {
      const under = join(busy, 'keep.txt', 'demo'); // a folder under a file
      const refused = await runCli(['demo', '--dir', under]);
      expect({ code: refused.code, stderr: refused.stderr.trim() }).toEqual({
        code: 2,
        stderr: `${under} cannot be used (ENOTDIR): give a folder you can write (--dir), or leave --dir out`,
      });
    });
  });
});

describe('the commands the demo suggests next', () => {
  it('are written as the user runs the agent: node src/cli/main.ts from a checkout, else pricing-agent', () => {
    const none = () => false;
    expect(invokedAs(['node', '/repo/src/cli/main.ts', 'demo'], '/repo', none)).toBe('node src/cli/main.ts');
    expect(invokedAs(['node', '/repo/src/cli/main.ts', 'demo'], '/tmp', none)).toBe('node /repo/src/cli/main.ts');
    // The launcher scripts/use-node.sh writes, when there is one: it runs in a new shell with an old node on PATH.
    const launcher = (path: string) => path === '/repo/pricing-agent';
    expect(invokedAs(['node', '/repo/src/cli/main.ts', 'demo'], '/repo', launcher)).toBe('./pricing-agent');
    expect(invokedAs(['node', '/repo/src/cli/main.ts', 'demo'], '/repo/inbox', launcher)).toBe('/repo/pricing-agent');
    expect(invokedAs(['/usr/bin/node', '/opt/pricing-agent/dist/cli/main.js', 'demo'], '/')).toBe('pricing-agent');
  });
});
