/**
 * Security properties of a running agent (issue 7), each against real processes and files:
 * - the local HTTP server listens on loopback only by default; /healthz, /readyz and /metrics show no secret, and
 *   every metric label comes from a bounded set (no file names, ids or paths) after files of every outcome;
 * - the database, its WAL files, reports, rejects and the agent's other files are created 0640 or tighter, also
 *   under umask 000, and follow a stricter umask (077 -> 0600);
 * - symlinks cannot make the agent read or write outside its folders: a link to /etc/passwd dropped in an inbox is
 *   refused and reported, an archive/ or failed/ folder replaced by a link outside is not written through; `push
 *   --source` of a file outside the inbox reads only that file and writes only inside the inbox; a second file of
 *   the same name never overwrites the first in archive/. (`..` cannot come out of readdir.)
 * Elsewhere: plain-http base URLs other than loopback are refused (test/config/network.test.ts), TLS errors are
 * not bypassed (test/cli/check.test.ts), and the key is grepped for in every file of a whole chaos run
 * (test/chaos/checks.ts).
 */
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { metricLabelProblems } from '../chaos/metrics-labels.ts';
import { daemonHarnessPerTest, until, untilReady, type DaemonHarness } from '../support/daemon-harness.ts';
import { runCli } from '../support/run-cli.ts';
import { reportsIn } from '../chaos/evidence.ts';

const openHarness = daemonHarnessPerTest();

const GOOD = 'transaction_id,item_id,transaction_timestamp\nSEC-1,A,2026-11-20T08:00:00Z\nSEC-BAD,A,not-a-date\n';

function config(harness: DaemonHarness, http = 'http:\n  port: 0\n'): string {
  return [
    `api:\n  base_url: ${harness.sandbox.url}\n  key_file: ./api-key\n`,
    `state:\n  dir: ./state\n${http}log:\n  level: info\n`,
    `sources:\n  - name: tx\n    entity: transactions\n    path: ./inbox/tx\n    stable_ms: 100\n    mode: bulk\n`,
    `  - name: competitors\n    entity: competitor_prices\n    path: ./inbox/competitors\n    stable_ms: 100\n    mode: import\n`,
  ].join('');
}

function nonLoopbackAddress(): string | null {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return null;
}

function refused(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/** Every file under `dir` with its permission bits (symlinks not followed). */
async function modes(dir: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const name of await readdir(dir, { recursive: true })) {
    const info = await lstat(join(dir, name));
    if (info.isFile()) out.set(name, info.mode & 0o777);
  }
  return out;
}

describe('the local HTTP server', () => {
  it('binds loopback by default, shows no secret, and has only bounded metric labels', { timeout: 60_000 }, async () => {
    const h = await openHarness();
    const daemon = await h.startReady(config(h));
    await writeFile(join(h.inbox('tx'), 'good.csv'), GOOD);
    await writeFile(join(h.inbox('tx'), 'broken-9f2c.csv'), 'no,known,columns\n1,2,3\n');
    await writeFile(join(h.inbox('competitors'), 'import.csv'), 'competitor_name,observed_at,regular_price,effective_price\nAldi,2026-11-20T08:00:00Z,1.99,1.79\n');
    for (const [source, name] of [['tx', 'good.csv'], ['tx', 'broken-9f2c.csv'], ['competitors', 'import.csv']] as const) await h.report(source, name);

    const url = new URL(/"http":"(http:\/\/[^"]+)"/.exec(daemon.output())?.[1] ?? 'http://invalid');
    expect(url.hostname).toBe('127.0.0.1');
    const outside = nonLoopbackAddress();
    if (outside !== null) expect(await refused(outside, Number(url.port)), `nothing answers on ${outside}`).toBe(true);

    // The counters move just after the report is written: poll the page briefly.
    let metrics = '';
    for (let i = 0; i < 100 && !metrics.includes('outcome="failed"'); i += 1) {
      metrics = (await h.get('/metrics')).body;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(metrics).toContain('pricing_agent_files_total{source="tx",outcome="failed"} 1');
    expect(metricLabelProblems(metrics, { sources: ['tx', 'competitors'] })).toEqual([]);
    expect(metrics).not.toMatch(/good\.csv|broken-9f2c|import\.csv|\/tmp\//);
    const pages = [metrics, (await h.get('/readyz')).body, (await h.get('/healthz')).body, daemon.output()];
    for (const page of pages) expect(page).not.toContain(h.sandbox.apiKey);
  });
});

describe('file modes', () => {
  it.each([
    [0o000, 0o640],
    [0o077, 0o600],
  ])('under umask %o: every file the agent creates is at most %o', { timeout: 60_000 }, async (umask, most) => {
    const h = await openHarness();
    await h.writeConfig(config(h));
    const previous = process.umask(umask); // inherited by the daemon started now
    let daemon;
    try {
      daemon = h.start();
    } finally {
      process.umask(previous);
    }
    await untilReady(h);
    await writeFile(join(h.inbox('tx'), 'modes.csv'), GOOD, { mode: 0o600 });
    await writeFile(join(h.inbox('competitors'), 'modes.csv'), 'competitor_name,observed_at,regular_price,effective_price\nAldi,2026-11-20T08:00:00Z,1.99,1.79\n', { mode: 0o600 });
    await h.report('tx', 'modes.csv');
    await h.report('competitors', 'modes.csv');
    daemon.child.kill('SIGTERM');
    await daemon.exited;
    const found = new Map([...(await modes(join(h.dir, 'state'))), ...[...(await modes(join(h.dir, 'inbox'))).entries()].map(([k, v]) => [`inbox/${k}`, v] as const)]);
    expect(found.has('pricing-agent.db')).toBe(true);
    expect([...found.keys()].some((k) => k.endsWith('modes.csv.report.json'))).toBe(true);
    expect([...found.keys()].some((k) => k.endsWith('modes.csv.rejects.csv'))).toBe(true);
    const loose = [...found].filter(([, mode]) => (mode & ~most) !== 0).map(([name, mode]) => `${name} ${mode.toString(8)}`);
    expect(loose).toEqual([]);
    for (const dir of ['state', 'inbox/tx/archive', 'inbox/tx/processing']) {
      expect(((await stat(join(h.dir, dir))).mode & 0o007).toString(8), `${dir} has no world bits`).toBe('0');
    }
  });
});

describe('symlinks and paths', () => {
  it('a link to /etc/passwd in an inbox is refused and reported; /etc/passwd is untouched and nothing is sent', { timeout: 60_000 }, async () => {
    const h = await openHarness();
    await h.startReady(config(h));
    const passwd = readFileSync('/etc/passwd');
    await symlink('/etc/passwd', join(h.inbox('tx'), 'passwd.csv'));
    const report = JSON.parse(await readFile(await h.report('tx', 'passwd.csv'), 'utf8')) as { status: string; error: { code: string; message: string } };
    expect(report).toMatchObject({ status: 'refused', error: { code: 'FILE_REFUSED' } });
    expect(report.error.message).toMatch(/symlink pointing outside the inbox/);
    expect(readFileSync('/etc/passwd').equals(passwd)).toBe(true);
    expect((await lstat('/etc/passwd')).isFile()).toBe(true);
    const refusedCopy = join(h.inbox('tx'), 'failed', 'passwd.csv');
    // The report is written before the link is moved beside it (a crash between leaves the report, not a lost link).
    await until(() => lstatSync(refusedCopy, { throwIfNoEntry: false }) !== undefined, 'the link moved to failed/');
    expect((await lstat(refusedCopy)).isSymbolicLink(), 'the link itself is moved to failed/, not the file').toBe(true);
    expect(await readFile(`${refusedCopy}.report.json`, 'utf8')).not.toMatch(/root:/);
    expect(h.sandbox.control.state().requests.total).toBeLessThanOrEqual(3); // the key check and the start-up pull
  });

  it('archive/ and failed/ replaced by links outside the inbox: the inbox is refused, nothing written through', { timeout: 60_000 }, async () => {
    const h = await openHarness();
    const daemon = await h.startReady(config(h));
    const outside = await mkdtemp(join(tmpdir(), 'pa-outside-'));
    await mkdir(join(outside, 'a'));
    await mkdir(join(outside, 'f'));
    // One source each: a deferred file holds the newer files of its source back, so two files of one source
    // would never both meet their link.
    await symlink(join(outside, 'a'), join(h.inbox('tx'), 'archive'));
    await symlink(join(outside, 'f'), join(h.inbox('competitors'), 'failed'));
    await writeFile(join(h.inbox('tx'), 'to-archive.csv'), GOOD);
    await writeFile(join(h.inbox('competitors'), 'to-fail.csv'), '');
    // Such an inbox is refused as a whole (src/ingest/inbox-file.ts): its files stay where they were dropped.
    await until(() => (daemon.output().match(/"msg":"inbox refused"/g)?.length ?? 0) >= 2, 'both inboxes to be refused', 30_000);
    expect(readdirSafe(h.inbox('tx'))).toContain('to-archive.csv');
    expect(readdirSafe(h.inbox('competitors'))).toContain('to-fail.csv');
    expect(await readdir(outside, { recursive: true })).toEqual(expect.arrayContaining(['a', 'f']));
    expect(await readdir(outside, { recursive: true })).toHaveLength(2);
    expect(daemon.output()).toMatch(/inbox refused: [^"]*\/archive is a symbolic link/);
    expect(daemon.output()).toMatch(/inbox refused: [^"]*\/failed is a symbolic link/);
    expect((await h.get('/readyz')).body).toMatch(/source tx: inbox refused/);
  });

  it('push --source with a file outside the inbox reads only that file, writes only inside the inbox, and leaves it in place', { timeout: 60_000 }, async () => {
    const h = await openHarness();
    await h.writeConfig(config(h));
    const elsewhere = await mkdtemp(join(tmpdir(), 'pa-elsewhere-'));
    const file = join(elsewhere, 'export.csv');
    await writeFile(file, GOOD);
    const before = await readdir(elsewhere);
    const run = await runCli(['push', file, '--source', 'tx', '--config', h.configFile, '--json'], { PRICING_API_KEY: undefined });
    expect(run.code, run.stderr).toBe(3); // done with a rejected row
    expect(await readdir(elsewhere)).toEqual(before);
    expect(await readFile(file, 'utf8')).toBe(GOOD);
    const reports = await reportsIn(h.inbox('tx'));
    expect(reports.map((r) => r.file)).toEqual(['export.csv']);
  });

  // Also a regression: written right after the first was claimed, the second file was never picked up (the
  // watcher took it for the file already handed over); see test/regressions/same-name-right-after-claim.test.ts.
  it('a second file of the same name never overwrites the first in archive/', { timeout: 60_000 }, async () => {
    const h = await openHarness();
    await h.startReady(config(h));
    await writeFile(join(h.inbox('tx'), 'daily.csv'), GOOD);
    await until(() => readdirSafe(h.inbox('tx')).includes('archive'), 'the first file archived', 30_000);
    await h.report('tx', 'daily.csv');
    await writeFile(join(h.inbox('tx'), 'daily.csv'), GOOD.replace('SEC-1', 'SEC-2'));
    // The report is written before its file is moved next to it: wait for the files themselves.
    const archived = () => {
      const day = readdirSafe(join(h.inbox('tx'), 'archive'))[0] ?? '';
      return readdirSafe(join(h.inbox('tx'), 'archive', day)).filter((n) => n.endsWith('.csv') && !n.includes('rejects'));
    };
    await until(() => archived().length >= 2, 'the second file archived', 30_000);
    const day = (await readdir(join(h.inbox('tx'), 'archive')))[0] ?? '';
    const names = archived();
    expect(names).toHaveLength(2);
    const contents = await Promise.all(names.map((n) => readFile(join(h.inbox('tx'), 'archive', day, n), 'utf8')));
    expect(contents.some((c) => c.includes('SEC-1'))).toBe(true);
    expect(contents.some((c) => c.includes('SEC-2'))).toBe(true);
  });
});

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
