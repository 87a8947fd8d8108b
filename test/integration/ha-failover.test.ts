/**
 * An active/standby pair (issue 15, docs/ha.md): two `pricing-agent run` processes with one PostgreSQL state and
 * one inbox folder, each reaching the sandbox through a proxy of its own that logs what that node sent.
 *
 * - One is active (/readyz?role=active 200), the other a ready standby (/readyz 200, role standby; ?role=active 503)
 *   that sends nothing at all.
 * - SIGKILL of the active in the middle of a file: the standby takes the lease over once it expired, resumes the file
 *   from its last checkpoint, and every row reaches the sandbox exactly once.
 * - SIGSTOP of the active in the middle of a file, past its lease: the standby takes over and finishes the file;
 *   after SIGCONT the old active sends nothing (its proxy's log) and steps down to standby.
 *
 * The postgres project only (HA needs the state in PostgreSQL).
 */
import { writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { request } from 'undici';
import { afterEach, describe, expect, it, onTestFailed } from 'vitest';
import { daemonHarness, type DaemonHarness } from '../support/daemon-harness.ts';
import { CLI_MAIN, runCli } from '../support/run-cli.ts';
import { TEST_BACKEND, testStateYaml } from '../support/state-db.ts';
import { until } from '../support/test-logger.ts';

const LEASE_S = 3;

/** A forwarding proxy in front of the sandbox: what one node sent, and when it arrived. */
interface LoggingProxy {
  url: string;
  log: { at: number; method: string; path: string; status?: number }[];
  close(): Promise<void>;
}

async function loggingProxy(target: string): Promise<LoggingProxy> {
  const upstream = new URL(target);
  const log: LoggingProxy['log'] = [];
  const server: Server = createServer((req, res) => {
    const entry: LoggingProxy['log'][number] = { at: Date.now(), method: req.method ?? '', path: req.url ?? '' };
    log.push(entry);
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        entry.status = answer.statusCode;
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface Node {
  name: string;
  proxy: LoggingProxy;
  configFile: string;
  start(): void;
  signal(signal: NodeJS.Signals): void;
  /** GET on the node's HTTP server (its port from the running line of its current process). */
  get(path: string): Promise<{ status: number; body: string }>;
  exited(): Promise<unknown>;
  output(): string;
}

function transactions(prefix: string, count: number): string {
  const lines = ['transaction_id,item_id,transaction_timestamp,quantity,price'];
  for (let i = 0; i < count; i += 1) lines.push(`${prefix}-${i},ITEM-${i % 97},2026-11-20T08:00:00Z,1,${(i % 50) + 0.99}`);
  return `${lines.join('\n')}\n`;
}

async function node(h: DaemonHarness, name: string): Promise<Node> {
  const proxy = await loggingProxy(h.sandbox.url);
  const configFile = join(h.dir, `${name}.yaml`);
  await writeFile(
    configFile,
    [
      `api:\n  base_url: ${proxy.url}\n  key_file: ./api-key\n`,
      await testStateYaml(`./state-${name}`, join(h.dir, 'state')), // one schema, a state.dir per node
      `log:\n  level: info\n`,
      `http:\n  port: 0\n`,
      `daemon:\n  shutdown_timeout_ms: 30000\n`,
      `ha:\n  enabled: true\n  node_name: ${name}\n  lease_s: ${LEASE_S}\n`,
      `sources:\n  - name: tx\n    entity: transactions\n    path: ./inbox/tx\n    stable_ms: 200\n    batch_size: 200\n`,
    ].join(''),
  );
  let out = '';
  let child: ReturnType<typeof spawn> | null = null;
  let exit: Promise<unknown> = Promise.resolve();
  return {
    name,
    proxy,
    configFile,
    start() {
      out = '';
      const c = spawn(process.execPath, [CLI_MAIN, 'run', '--config', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
      c.stdout?.on('data', (b: Buffer) => (out += b.toString()));
      c.stderr?.on('data', (b: Buffer) => (out += b.toString()));
      exit = new Promise((resolve) => c.on('exit', resolve));
      child = c;
    },
    signal(signal) {
      child?.kill(signal);
    },
    async get(path) {
      const url = /"http":"(http:\/\/[^"]+)"/.exec(out)?.[1];
      if (!url) throw new Error(`${name} has not reported its HTTP address yet`);
      const res = await request(`${url}${path}`);
      return { status: res.statusCode, body: await res.body.text() };
    },
    exited: () => exit,
    output: () => out,
  };
}

async function readyz(n: Node, query = ''): Promise<{ status: number; role?: string }> {
  try {
    const res = await n.get(`/readyz${query}`);
    return { status: res.status, ...(JSON.parse(res.body) as { role?: string }) };
  } catch {
    return { status: 0 };
  }
}

/** Waits until `n` answers /readyz?role=active with 200. */
async function untilActive(n: Node): Promise<void> {
  await until(async () => (await readyz(n, '?role=active')).status === 200, `${n.name} active`, 60_000);
}

let h: DaemonHarness | null = null;
const nodes: Node[] = [];
afterEach(async () => {
  for (const n of nodes.splice(0)) {
    n.signal('SIGCONT');
    n.signal('SIGKILL');
    await n.exited();
    await n.proxy.close();
  }
  await h?.close();
  h = null;
});

describe.runIf(TEST_BACKEND === 'postgres')('an HA pair', () => {
  it('one active, one standby that sends nothing; SIGKILL and SIGSTOP of the active: taken over, every row once', async () => {
    h = await daemonHarness();
    const harness = h;
    harness.sandbox.control.setFaults({ latency_ms: 40, paths: ['POST /v1/transactions/bulk'] });
    const [a, b] = [await node(harness, 'node-a'), await node(harness, 'node-b')];
    nodes.push(a, b);
    onTestFailed(() => {
      for (const n of [a, b]) console.log(`--- ${n.name}\n${n.output().slice(-6000)}`);
    });
    a.start();
    await untilActive(a);
    b.start();
    await until(async () => (await readyz(b)).status === 200, 'node-b ready', 60_000);
    expect(await readyz(b)).toMatchObject({ status: 200, role: 'standby' });
    expect((await readyz(b, '?role=active')).status).toBe(503);
    expect((await b.get('/metrics')).body).toMatch(/pricing_agent_ha_role\{role="standby"\} 1/);
    expect(b.proxy.log).toEqual([]); // a standby sends nothing, not even a key check

    // SIGKILL of the active in the middle of a file.
    const first = transactions('K', 6_000);
    await writeFile(join(harness.inbox('tx'), 'killed.csv'), first);
    await until(() => harness.transactionKeys('K').length >= 600, 'rows of killed.csv in the sandbox', 60_000);
    a.signal('SIGKILL');
    await a.exited();
    await untilActive(b);
    await harness.report('tx', 'killed.csv', 120_000);
    expect(harness.transactionKeys('K')).toHaveLength(6_000);
    expect(b.proxy.log.length).toBeGreaterThan(0);

    // The killed node comes back as a standby; then SIGSTOP of the active (b) in the middle of a file.
    a.start();
    await until(async () => (await readyz(a)).status === 200, 'node-a ready', 60_000);
    expect((await readyz(a)).role).toBe('standby');
    await writeFile(join(harness.inbox('tx'), 'stopped.csv'), transactions('S', 6_000));
    await until(() => harness.transactionKeys('S').length >= 600, 'rows of stopped.csv in the sandbox', 60_000);
    // Frozen while it waits to retry a 503: on waking, the retry is due at once, before any commit could fail.
    harness.sandbox.control.setFaults({ error_503: 1, paths: ['POST /v1/transactions/bulk'] });
    await until(() => b.proxy.log.some((r) => r.status === 503), 'a 503 answered to node-b', 60_000);
    b.signal('SIGSTOP');
    const stoppedAt = Date.now();
    await untilActive(a); // after b's lease ended on the database's clock
    harness.sandbox.control.setFaults({ latency_ms: 40, paths: ['POST /v1/transactions/bulk'] });
    await harness.report('tx', 'stopped.csv', 120_000);
    const sentByBWhileStopped = b.proxy.log.filter((r) => r.at > stoppedAt + 200).length;
    const resumedAt = Date.now();
    b.signal('SIGCONT');
    await until(async () => (await readyz(b)).role === 'standby' && b.output().includes('steps down to standby'), 'node-b standby', 60_000);
    expect(sentByBWhileStopped).toBe(0);
    expect(b.proxy.log.filter((r) => r.at >= resumedAt)).toEqual([]); // the old active sent nothing after waking
    expect(harness.transactionKeys('S')).toHaveLength(6_000);
    expect((await readyz(a, '?role=active')).status).toBe(200);

    // status (any node's config) shows the pair: the lease's holder and each node's role.
    const status = await runCli(['status', '--config', b.configFile, '--json']);
    const report = JSON.parse(status.stdout) as { ha: { this_node: string; lease: { holder: string; token: number }; nodes: { node: string; role: string }[] } };
    expect(report.ha).toMatchObject({ this_node: 'node-b', lease: { holder: 'node-a', token: 3 } });
    expect(report.ha.nodes.map((n) => [n.node, n.role])).toEqual([
      ['node-a', 'active'],
      ['node-b', 'standby'],
    ]);
    expect((await runCli(['status', '--config', b.configFile])).stdout).toMatch(/HA\s+this node node-b; active: node-a \(lease token 3/);
  }, 240_000);
});
