/**
 * `pricing-agent run` as a child process against a sandbox in the test process: a config file, inbox folders, the
 * process's output, and helpers to wait for what the daemon does (reports appearing, /readyz answering).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterEach } from 'vitest';
import { startSandbox, type SandboxHandle, type SandboxOptions } from '../../src/sandbox/index.ts';
import type { SqlParams } from '../../src/store/sql-db.ts';
import { CLI_MAIN } from './run-cli.ts';
import { openTestDb, testStateYaml } from './state-db.ts';
import { sqlValue } from './state-sql.ts';
import { until } from './test-logger.ts';

const KILL_AT_SQL = fileURLToPath(new URL('./kill-at-sql.ts', import.meta.url));

export interface DaemonProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, as systemd stops the daemon; resolves with its exit code. */
  stop(): Promise<number | null>;
}

export interface DaemonHarness {
  dir: string;
  sandbox: SandboxHandle;
  configFile: string;
  keyFile: string;
  inbox(source: string): string;
  writeConfig(yaml: string): Promise<void>;
  /** `run` as a child; with `killAtSql` it SIGKILLs itself when it prepares a statement containing it (kill-at-sql.ts). */
  start(options?: { killAtSql?: string }): DaemonProcess;
  /** Writes `yaml` as the config, starts the daemon and waits until its /readyz answers 200. */
  startReady(yaml: string): Promise<DaemonProcess>;
  /** The address of the local HTTP server of the daemon started last (port 0: read from its "running" log line). */
  httpUrl(): string;
  /** GET on the local HTTP server of the daemon started last. */
  get(path: string): Promise<{ status: number; body: string }>;
  /**
   * Waits until `<name>.report.json` exists under the source's archive/ or failed/ folder (or a report whose path
   * there matches `name`, for a name the archive changed); returns its path.
   */
  report(source: string, name: string | RegExp, timeoutMs?: number): Promise<string>;
  /** The transaction ids the sandbox holds that start with `${prefix}-`. */
  transactionKeys(prefix: string): string[];
  /** The `state:` section of a config for the daemon (`dir: ./state`), on this run's backend (test/support/state-db.ts). */
  stateYaml(): Promise<string>;
  /** A config: the `api:` section (this sandbox, ./api-key), the `state:` section (stateYaml), then `sections`. */
  configYaml(...sections: string[]): Promise<string>;
  /** The first column of the first row of `sql` on the daemon's state (read-only, beside the daemon); undefined before it exists. */
  stateValue<V>(sql: string, params?: SqlParams): Promise<V | undefined>;
  close(): Promise<void>;
}

/** The path of `<name>.report.json` under the inbox's archive/ or failed/ folder, or null while there is none. */
export async function findReport(inbox: string, name: string | RegExp): Promise<string | null> {
  for (const top of ['archive', 'failed']) {
    let entries: string[];
    try {
      entries = await readdir(join(inbox, top), { recursive: true });
    } catch {
      continue;
    }
    const hit = entries.find((e) => (typeof name === 'string' ? e.endsWith(`${name}.report.json`) : name.test(e)));
    if (hit) return join(inbox, top, hit);
  }
  return null;
}

export async function daemonHarness(sandboxOptions: SandboxOptions = {}): Promise<DaemonHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'pa-daemon-'));
  const sandbox = await startSandbox({ approvals: 0, largeGridRows: 0, ...sandboxOptions });
  const keyFile = join(dir, 'api-key');
  await writeFile(keyFile, `${sandbox.apiKey}\n`, { mode: 0o600 });
  const configFile = join(dir, 'pricing-agent.yaml');
  const children: DaemonProcess[] = [];
  const h: DaemonHarness = {
    dir,
    sandbox,
    configFile,
    keyFile,
    inbox: (source) => join(dir, 'inbox', source),
    async writeConfig(yaml) {
      await writeFile(configFile, yaml);
    },
    start(options = {}) {
      const preload = options.killAtSql === undefined ? [] : ['--import', KILL_AT_SQL];
      const child = spawn(process.execPath, [...preload, CLI_MAIN, 'run', '--config', configFile], {
        env: { ...process.env, PRICING_AGENT_CONFIG: undefined, PRICING_AGENT_DEBUG: undefined, PRICING_AGENT_TEST_KILL_AT_SQL: options.killAtSql },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on('exit', (code, signal) => resolve({ code, signal })),
      );
      const stop = async () => {
        child.kill('SIGTERM');
        return (await exited).code;
      };
      const proc = { child, output: () => out, exited, stop };
      children.push(proc);
      return proc;
    },
    async startReady(yaml) {
      await h.writeConfig(yaml);
      const proc = h.start();
      await untilReady(h);
      return proc;
    },
    httpUrl() {
      const url = /"http":"(http:\/\/[^"]+)"/.exec(children.at(-1)?.output() ?? '')?.[1];
      if (!url) throw new Error('the daemon has not reported its HTTP address yet');
      return url;
    },
    async get(path) {
      const res = await request(`${h.httpUrl()}${path}`);
      return { status: res.statusCode, body: await res.body.text() };
    },
    async report(source, name, timeoutMs = 30_000) {
      let found: string | null = null;
      const deadline = Date.now() + timeoutMs;
      while (found === null) {
        found = await findReport(h.inbox(source), name);
        if (found) break;
        if (Date.now() > deadline) {
          // What the inbox holds and what the daemon said: a file that never came through is otherwise a mystery.
          const inbox = await readdir(h.inbox(source), { recursive: true }).catch(() => []);
          const said = children.at(-1)?.output().slice(-4000) ?? '(no daemon started)';
          throw new Error(`no report for ${String(name)} in ${source} after ${timeoutMs} ms; inbox: ${inbox.join(', ')}; daemon output (end):\n${said}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      return found;
    },
    transactionKeys(prefix) {
      return (sandbox.control.state({ keys: true }).transactions.keys ?? []).filter((k) => k.startsWith(`${prefix}-`));
    },
    stateYaml: () => testStateYaml('./state', join(dir, 'state')),
    async configYaml(...sections) {
      return [`api:\n  base_url: ${sandbox.url}\n  key_file: ./api-key\n`, await h.stateYaml(), ...sections].join('');
    },
    async stateValue<V>(sql: string, params: SqlParams = []) {
      const db = await openTestDb(join(dir, 'state'), { readonly: true }).catch(() => null);
      if (db === null) return undefined;
      try {
        return await sqlValue<V>(db, sql, params);
      } finally {
        await db.close();
      }
    },
    async close() {
      for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
      await Promise.all(children.map((c) => c.exited));
      await sandbox.close();
    },
  };
  for (const source of ['products', 'stores', 'tx', 'competitors']) await mkdir(h.inbox(source), { recursive: true });
  return h;
}

/**
 * A daemon harness for each test that opens one (the function returned, called inside the test): closed after that
 * test, its daemons killed and its sandbox closed; then `after` undoes what the test set up around it (mounts under
 * its folder, say), once no daemon holds anything there.
 */
export function daemonHarnessPerTest(after: () => void | Promise<void> = () => undefined): (options?: SandboxOptions) => Promise<DaemonHarness> {
  let opened: DaemonHarness | null = null;
  afterEach(async () => {
    await opened?.close();
    opened = null;
    await after();
  });
  return async (options) => (opened = await daemonHarness(options));
}

/** Waits for the daemon's /readyz to answer with `status`. */
export async function untilReady(h: DaemonHarness, status = 200, timeoutMs = 30_000): Promise<string> {
  let last = '';
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await h.get('/readyz');
      last = res.body;
      if (res.status === status) return res.body;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`/readyz did not answer ${status} (last: ${last})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export { until };
