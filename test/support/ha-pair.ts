/**
 * Nodes of an HA pair for tests (docs/ha.md): `pricing-agent run` child processes that share one PostgreSQL state
 * (one schema, a state.dir each) and the harness's inbox folders, each reaching the sandbox through a forwarding proxy
 * of its own that logs what that node sent and when it arrived (the evidence that a standby, or an active paused
 * past its lease, sent nothing). With `network: true` a node reaches PostgreSQL and its proxy through cables
 * (cable.ts) that a test unplugs: the node's server losing its network.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type RequestListener, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { cable, type Cable } from './cable.ts';
import { afterEach, onTestFailed } from 'vitest';
import type { SandboxOptions } from '../../src/sandbox/index.ts';
import { daemonHarness, type DaemonHarness, type DaemonProcess } from './daemon-harness.ts';
import { CLI_MAIN } from './run-cli.ts';
import { testStateYaml } from './state-db.ts';
import { until } from './test-logger.ts';

/** A forwarding proxy in front of the sandbox: what one node sent, when it arrived, and the status it got. */
export interface LoggingProxy {
  readonly url: string;
  /** `from`: the address the request came from (a server of test/servers/netns.ts has its own). */
  readonly log: { at: number; from: string; method: string; path: string; status?: number }[];
  close(): Promise<void>;
}

/** `host`: where it listens; `tls`: its certificate and key (PEM), to be reached over https. */
export async function loggingProxy(target: string, host = '127.0.0.1', tls?: { cert: string; key: string }): Promise<LoggingProxy> {
  const upstream = new URL(target);
  const log: LoggingProxy['log'] = [];
  const forwardRequest: RequestListener = (req, res) => {
    const entry: LoggingProxy['log'][number] = { at: Date.now(), from: req.socket.remoteAddress ?? '', method: req.method ?? '', path: req.url ?? '' };
    log.push(entry);
    const forward = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      entry.status = answer.statusCode;
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  };
  const server: Server = tls === undefined ? createServer(forwardRequest) : createTlsServer(tls, forwardRequest);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls === undefined ? 'http' : 'https'}://${host}:${port}`,
    log,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface HaNode {
  readonly name: string;
  readonly proxy: LoggingProxy;
  readonly configFile: string;
  /** Every process of this node, oldest first. */
  readonly processes: DaemonProcess[];
  start(): DaemonProcess;
  signal(signal: NodeJS.Signals): void;
  /** Whether its current process is running (not exited; it may be stopped). */
  running(): boolean;
  /** GET on the HTTP server of its current process (the port from its running line). */
  get(path: string): Promise<{ status: number; body: string }>;
  exited(): Promise<unknown>;
  output(): string;
  /** With `network: true`: its cables to PostgreSQL and to the platform (its proxy); null otherwise. */
  readonly network: { readonly postgres: Cable; readonly api: Cable } | null;
}

export interface HaNodeOptions {
  readonly leaseS: number;
  /** The `sources:` list items (YAML, indented by two). */
  readonly sources: string;
  /** More top-level sections (pull:, ...). */
  readonly extra?: string;
  /** More `api:` keys (indented by two). */
  readonly api?: string;
  /** Reach PostgreSQL and the proxy through cables the test can unplug. */
  readonly network?: boolean;
}

export async function haNode(h: DaemonHarness, name: string, options: HaNodeOptions): Promise<HaNode> {
  const proxy = await loggingProxy(h.sandbox.url);
  const configFile = join(h.dir, `${name}.yaml`);
  let stateYaml = await testStateYaml(`./state-${name}`, join(h.dir, 'state')); // one schema, a state.dir per node
  let apiUrl = proxy.url;
  let network: HaNode['network'] = null;
  if (options.network === true) {
    const pg = /postgres:\/\/[^@\s]*@([\d.]+):(\d+)/.exec(stateYaml);
    if (pg === null) throw new Error('network: true needs the state in PostgreSQL over TCP');
    network = {
      postgres: await cable({ host: pg[1] as string, port: Number(pg[2]) }),
      api: await cable({ host: '127.0.0.1', port: Number(new URL(proxy.url).port) }),
    };
    stateYaml = stateYaml.replace(`${pg[1]}:${pg[2]}`, network.postgres.address);
    apiUrl = `http://${network.api.address}`;
  }
  await writeFile(
    configFile,
    [
      `api:\n  base_url: ${apiUrl}\n  key_file: ./api-key\n${options.api ?? ''}`,
      stateYaml,
      `log:\n  level: info\n`,
      `http:\n  port: 0\n`,
      `daemon:\n  shutdown_timeout_ms: 20000\n`,
      `ha:\n  enabled: true\n  node_name: ${name}\n  lease_s: ${options.leaseS}\n`,
      options.extra ?? '',
      `sources:\n${options.sources}`,
    ].join(''),
  );
  const processes: DaemonProcess[] = [];
  const current = (): DaemonProcess | undefined => processes.at(-1);
  return {
    name,
    proxy,
    network,
    configFile,
    processes,
    start() {
      const child: ChildProcess = spawn(process.execPath, [CLI_MAIN, 'run', '--config', configFile], {
        env: { ...process.env, PRICING_AGENT_CONFIG: undefined, PRICING_AGENT_DEBUG: undefined },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
      child.stderr?.on('data', (b: Buffer) => (out += b.toString()));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
      const stop = async () => {
        child.kill('SIGTERM');
        return (await exited).code;
      };
      const proc: DaemonProcess = { child, output: () => out, exited, stop };
      processes.push(proc);
      return proc;
    },
    signal(signal) {
      current()?.child.kill(signal);
    },
    running() {
      const c = current()?.child;
      return c !== undefined && c.exitCode === null && c.signalCode === null;
    },
    async get(path) {
      const url = /"http":"(http:\/\/[^"]+)"/.exec(current()?.output() ?? '')?.[1];
      if (!url) throw new Error(`${name} has not reported its HTTP address yet`);
      const res = await request(`${url}${path}`, { headersTimeout: 5_000, bodyTimeout: 5_000 });
      return { status: res.statusCode, body: await res.body.text() };
    },
    exited: () => current()?.exited ?? Promise.resolve(),
    output: () => current()?.output() ?? '',
  };
}

/** /readyz of the node's current process: its status and role; status 0 while it does not answer. */
export async function readyz(n: HaNode, query = ''): Promise<{ status: number; role?: string }> {
  try {
    const res = await n.get(`/readyz${query}`);
    return { status: res.status, ...(JSON.parse(res.body) as { role?: string }) };
  } catch {
    return { status: 0 };
  }
}

/** Waits until `n` answers /readyz?role=active with 200. */
export async function untilActive(n: HaNode, timeoutMs = 60_000): Promise<void> {
  await until(async () => (await readyz(n, '?role=active')).status === 200, `${n.name} active`, timeoutMs);
}

/** The node that answers /readyz?role=active with 200 (waiting for one, e.g. during a takeover). */
export async function activeNode(nodes: readonly HaNode[], timeoutMs = 60_000): Promise<HaNode> {
  let found: HaNode | null = null;
  await until(
    async () => {
      for (const n of nodes) if (n.running() && (await readyz(n, '?role=active')).status === 200) found = n;
      return found !== null;
    },
    'an active node',
    timeoutMs,
  );
  return found as unknown as HaNode;
}

/** The two nodes of a pair on `h`: node-a and node-b. */
export async function haPair(h: DaemonHarness, options: HaNodeOptions): Promise<[HaNode, HaNode]> {
  return [await haNode(h, 'node-a', options), await haNode(h, 'node-b', options)];
}

/** The end of each node's output (for a failed test). */
export function nodesOutput(nodes: readonly HaNode[]): string {
  return nodes.map((n) => `--- ${n.name}\n${n.output().slice(-6000)}`).join('\n');
}

/** Ends every process of `nodes` (a stopped one too: SIGCONT, then SIGKILL) and closes their proxies and cables. */
export async function endNodes(nodes: readonly HaNode[]): Promise<void> {
  for (const n of nodes) {
    n.signal('SIGCONT');
    n.signal('SIGKILL');
    await n.exited();
    await n.proxy.close();
    await n.network?.postgres.close();
    await n.network?.api.close();
  }
}

/**
 * An HA pair for each test that opens one (the function returned, called inside the test): node-a and node-b on a
 * daemon harness of their own. A failing test prints the nodes' output; after the test their processes end, then
 * the harness closes.
 */
export function haPairPerTest(): (sandbox: SandboxOptions, options: HaNodeOptions) => Promise<{ harness: DaemonHarness; a: HaNode; b: HaNode }> {
  let opened: { harness: DaemonHarness; nodes: readonly HaNode[] } | null = null;
  afterEach(async () => {
    await endNodes(opened?.nodes ?? []);
    await opened?.harness.close();
    opened = null;
  });
  return async (sandbox, options) => {
    const harness = await daemonHarness(sandbox);
    opened = { harness, nodes: [] };
    const [a, b] = await haPair(harness, options);
    opened = { harness, nodes: [a, b] };
    onTestFailed(() => console.log(nodesOutput([a, b])));
    return { harness, a, b };
  };
}
