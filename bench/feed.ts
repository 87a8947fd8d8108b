/**
 * `npm run bench:feed`: the feed under a chain's worth of tills. The agent (`pricing-agent run`, compiled as it
 * ships, production Node flags) serves the feed on 127.0.0.1 with 2,000 consumers, each scoped to one store, and
 * pulls approved prices every second from a sandbox with 2,000 stores (a child process of its own). 2,000 real HTTP
 * clients (undici, one keep-alive connection each, in one child process) long-poll with `wait=30`; then 100,000
 * approvals reach the sandbox, 5,000 every 250 ms, and the agent's pull commits them page by page (500 rows a page).
 *
 * - Commit-to-client latency: for every row a client receives, its arrival time minus the row's `recorded_at` (set
 *   by the agent at the start of the page's transaction, so the page's own commit time is counted too; same host,
 *   same clock). p50, p99 and max over every row.
 * - Read throughput: then every consumer reads its whole history again from seq 0, all at once, in pages of 1000:
 *   rows received per second, the best of `--rounds` rounds (the machine is shared).
 * - Agent memory: the peak RSS of the agent's process (VmHWM) over the whole run.
 * - The same-run baseline: then the agent stops, and the same clients run the same read rounds against a minimal
 *   feed server on the same database (bench/feed-minimal.ts: node:http and one prepared statement); the agent's best
 *   read round and peak RSS are printed as ratios of the minimal server's.
 * Every consumer must receive exactly the rows of its store, once: the bench fails otherwise.
 *
 *   node bench/feed.ts [--consumers 2000] [--approvals 100000] [--rounds 3] [--profile DIR]
 *
 * Ends with exactly one line:  bench:feed consumers=2000 p99_ms=P rows_per_s=R agent_rss_mb=M
 * Targets: p99 <= 1000 ms, >= 50,000 rows/s, RSS <= 300 MB.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setMaxListeners } from 'node:events';
import Database from 'better-sqlite3';
import { Client, request } from 'undici';
import { sha256Hex } from '../src/config/feed-schema.ts';
import { compileForBench } from './compiled.ts';

const { values } = parseArgs({
  options: {
    consumers: { type: 'string', default: '2000' },
    approvals: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '3' },
    /** A directory: the agent writes a V8 CPU profile there (open it in Chrome's DevTools). */
    profile: { type: 'string' },
    role: { type: 'string' },
    url: { type: 'string' },
    plan: { type: 'string' },
    /** clients: '0' skips the live phase (the baseline's clients only read). */
    live: { type: 'string', default: '1' },
  },
});

interface Consumer {
  token: string;
  store: string;
}

/** Parent -> clients. */
type Command = { do: 'throughput' } | { do: 'stop' };
/** Clients -> parent. */
type Report =
  | { kind: 'progress'; received: number }
  | { kind: 'live'; latencies: number[]; perConsumer: number[] }
  | { kind: 'round'; rows: number; seconds: number };

/** The approvals reach the platform as a stream: this many every INJECT_EVERY_MS. */
const INJECT_CHUNK = 5_000;
const INJECT_EVERY_MS = 250;

if (values.role === 'clients') await clients(values.url ?? '', values.plan ?? '', values.live !== '0');
else await main();

// ---------------------------------------------------------------------------------------------------- the clients

/** The 2,000 tills: one undici Client (one keep-alive connection) each, long-polling their store's rows. */
async function clients(url: string, planFile: string, withLive: boolean): Promise<void> {
  const consumers = JSON.parse(readFileSync(planFile, 'utf8')) as Consumer[];
  const pool = consumers.map(() => new Client(url, { pipelining: 1, keepAliveTimeout: 10_000, headersTimeout: 120_000, bodyTimeout: 120_000 }));
  const live = new AbortController();
  setMaxListeners(0, live.signal); // one listener per till
  const latencies: number[] = [];
  const perConsumer = consumers.map(() => 0);
  let received = 0;
  const PAGE = 1000;

  const page = async (i: number, after: number, wait: number, signal?: AbortSignal) => {
    const client = pool[i] as Client;
    const consumer = consumers[i] as Consumer;
    const res = await client.request({
      path: `/feed/v1/changes?after=${after}&limit=${PAGE}&wait=${wait}`,
      method: 'GET',
      headers: { authorization: `Bearer ${consumer.token}` },
      signal,
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`consumer ${i}: ${res.statusCode} ${text.slice(0, 200)}`);
    return JSON.parse(text) as { items: { seq: number; store_id: string | null; recorded_at: string }[]; next_after: number };
  };

  const poll = async (i: number) => {
    let after = 0;
    while (!live.signal.aborted) {
      let body;
      try {
        body = await page(i, after, 30, live.signal);
      } catch (error) {
        if (live.signal.aborted) return;
        throw error;
      }
      const arrived = Date.now();
      for (const item of body.items) {
        if (item.store_id !== consumers[i]?.store) throw new Error(`consumer ${i} received a row of store ${String(item.store_id)}`);
        latencies.push(arrived - Date.parse(item.recorded_at));
      }
      perConsumer[i] = (perConsumer[i] ?? 0) + body.items.length;
      received += body.items.length;
      after = body.next_after;
    }
  };

  const nextCommand = () => new Promise<Command>((resolve) => process.once('message', (m) => resolve(m as Command)));
  let command: Command = { do: 'throughput' };
  if (withLive) {
    const polls = consumers.map((_, i) => poll(i));
    const progress = setInterval(() => send({ kind: 'progress', received }), 100);
    command = await nextCommand();
    clearInterval(progress);
    live.abort();
    await Promise.allSettled(polls);
    send({ kind: 'live', latencies, perConsumer });
  }
  // Read rounds: every consumer reads its whole history from seq 0, until a page shorter than a full one.
  while (command.do === 'throughput') {
    command = await nextCommand();
    if (command.do === 'stop') break;
    const started = performance.now();
    const counts = await Promise.all(
      consumers.map(async (_, i) => {
        let rows = 0;
        for (let after = 0, full = true; full; ) {
          const body = await page(i, after, 0);
          rows += body.items.length;
          after = body.next_after;
          full = body.items.length === PAGE;
        }
        return rows;
      }),
    );
    send({ kind: 'round', rows: counts.reduce((a, b) => a + b, 0), seconds: (performance.now() - started) / 1000 });
  }
  await Promise.all(pool.map((c) => c.close()));
  process.disconnect();
}

function send(report: Report): void {
  process.send?.(report);
}

// ---------------------------------------------------------------------------------------------------- the parent

async function main(): Promise<void> {
  const consumerCount = Number(values.consumers);
  const approvals = Number(values.approvals);
  const rounds = Number(values.rounds);
  const dir = mkdtempSync(join(tmpdir(), 'pa-bench-feed-'));
  console.log('compiling the agent (as it ships)');
  const compiled = await compileForBench();
  const children: ChildProcess[] = [];
  try {
    const sandbox = await startSandbox(consumerCount);
    console.log(`sandbox with ${sandbox.stores.length} stores at ${sandbox.url}`);
    children.push(sandbox.child);
    const plan: Consumer[] = sandbox.stores.slice(0, consumerCount).map((store) => ({ store, token: randomBytes(32).toString('hex') }));
    writeFileSync(join(dir, 'plan.json'), JSON.stringify(plan));
    writeFileSync(join(dir, 'api-key'), `${sandbox.key}\n`, { mode: 0o600 });
    writeFileSync(join(dir, 'pricing-agent.yaml'), agentConfig(sandbox.url, plan));

    const agent = await startAgent(compiled.path(new URL('../src/cli/main.ts', import.meta.url)), dir);
    children.push(agent.child);
    console.log(`agent ${agent.child.pid ?? '?'} serves the feed at ${agent.feedUrl}; ${plan.length} consumers, one store each`);

    const clients = startClients(compiled.path(import.meta.url), agent.feedUrl, join(dir, 'plan.json'), true);
    children.push(clients.worker);

    await untilMetric(agent.metricsUrl, /^pricing_agent_feed_waiting_requests (\d+)$/m, (n) => n >= plan.length, 'every consumer to wait');
    console.log(`${plan.length} consumers long-polling; injecting ${approvals} approvals, ${INJECT_CHUNK} every ${INJECT_EVERY_MS} ms`);
    const live = performance.now();
    for (let left = approvals; left > 0; left -= INJECT_CHUNK) {
      await inject(sandbox.url, Math.min(left, INJECT_CHUNK), plan.map((c) => c.store));
      await sleep(INJECT_EVERY_MS);
    }
    while (clients.received() < approvals) {
      const exited = clients.exited();
      if (exited) throw exited;
      if (performance.now() - live > 600_000) throw new Error(`only ${clients.received()} of ${approvals} rows arrived in 10 minutes`);
      await sleep(50);
    }
    const liveSeconds = (performance.now() - live) / 1000;
    const done = clients.next('live');
    clients.worker.send({ do: 'throughput' } satisfies Command);
    const { latencies, perConsumer } = await done;
    checkEveryRowOnce(join(dir, 'state', 'pricing-agent.db'), plan, perConsumer, approvals);
    const sorted = Float64Array.from(latencies).sort();
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
    console.log(
      `live: ${latencies.length} rows to ${plan.length} consumers in ${liveSeconds.toFixed(1)} s; ` +
        `commit-to-client latency p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${sorted[sorted.length - 1] ?? 0} ms`,
    );

    const rates = await readRounds(clients, rounds, 'agent');
    const rss = peakRssMb(agent.child.pid ?? 0);
    const cpu = cpuSeconds(agent.child.pid ?? 0);
    console.log(`agent: peak RSS ${rss} MB, ${cpu.toFixed(1)} CPU-seconds over the run`);
    await stop(agent.child);

    // The baseline, in the same run: the same clients read the same rows from a minimal server on the same database.
    const minimal = await startMinimal(compiled.path(new URL('./feed-minimal.ts', import.meta.url)), join(dir, 'state', 'pricing-agent.db'), join(dir, 'plan.json'));
    children.push(minimal.child);
    const baselineClients = startClients(compiled.path(import.meta.url), minimal.url, join(dir, 'plan.json'), false);
    children.push(baselineClients.worker);
    const baseline = await readRounds(baselineClients, rounds, 'minimal');
    const baselineRss = peakRssMb(minimal.child.pid ?? 0);
    console.log(`minimal: peak RSS ${baselineRss} MB (node:http, one prepared statement, no long-poll: the floor, not a target)`);
    const best = Math.max(...rates);
    const bestBaseline = Math.max(...baseline);
    console.log(
      `against the minimal server: read ${Math.round(best)} vs ${Math.round(bestBaseline)} rows/s (ratio ${(best / bestBaseline).toFixed(2)}), ` +
        `peak RSS ${rss} vs ${baselineRss} MB (ratio ${(rss / baselineRss).toFixed(2)})`,
    );
    console.log(`bench:feed consumers=${plan.length} p99_ms=${at(0.99)} rows_per_s=${Math.round(best)} agent_rss_mb=${rss}`);
  } finally {
    const running = children.reverse().filter((child) => child.exitCode === null && child.signalCode === null);
    const exits = running.map((child) => new Promise((resolve) => child.once('exit', resolve)));
    for (const child of running) child.kill('SIGTERM');
    await Promise.race([Promise.all(exits), sleep(60_000)]);
    await compiled.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface ClientsProcess {
  worker: ChildProcess;
  received(): number;
  exited(): Error | null;
  next<K extends Report['kind']>(kind: K): Promise<Extract<Report, { kind: K }>>;
}

/** The clients' process (this file, role clients), reading from `url`; `live`: long-poll first, as tills do. */
function startClients(script: string, url: string, planFile: string, live: boolean): ClientsProcess {
  const worker = fork(script, ['--role', 'clients', '--url', url, '--plan', planFile, '--live', live ? '1' : '0'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: ['--max-semi-space-size=8', '--max-old-space-size=1536'],
  });
  let received = 0;
  let exited: Error | null = null;
  const pending = new Map<Report['kind'], (report: Report) => void>();
  worker.on('message', (m) => {
    const report = m as Report;
    if (report.kind === 'progress') received = report.received;
    else pending.get(report.kind)?.(report);
  });
  worker.once('exit', (code) => (exited = new Error(`the clients exited with ${String(code)}`)));
  return {
    worker,
    received: () => received,
    exited: () => exited,
    next: (kind) =>
      new Promise((resolve, reject) => {
        pending.set(kind, (r) => resolve(r as never));
        worker.once('exit', () => reject(exited ?? new Error('the clients exited')));
      }),
  };
}

/** `rounds` read rounds of every consumer from seq 0; rows per second of each. Ends the clients' process. */
async function readRounds(clients: ClientsProcess, rounds: number, who: string): Promise<number[]> {
  const rates: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const result = clients.next('round');
    clients.worker.send({ do: 'throughput' } satisfies Command);
    const r = await result;
    rates.push(r.rows / r.seconds);
    console.log(`${who}: read round ${round + 1}: ${r.rows} rows from seq 0 in ${r.seconds.toFixed(2)} s: ${Math.round(r.rows / r.seconds)} rows/s`);
  }
  clients.worker.send({ do: 'stop' } satisfies Command);
  return rates;
}

async function startMinimal(script: string, db: string, planFile: string): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(script, ['--db', db, '--plan', planFile], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: ['--max-semi-space-size=8'] });
  const { url } = await new Promise<{ url: string }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { url: string }));
    child.once('exit', (code) => reject(new Error(`the minimal server exited with ${String(code)}`)));
  });
  return { child, url };
}

/** SIGTERM, and wait for the exit. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

function agentConfig(url: string, plan: readonly Consumer[]): string {
  const consumers = plan.map((c, i) => `    - name: pos-${String(i).padStart(4, '0')}\n      token_sha256: ${sha256Hex(c.token)}\n      stores: [${c.store}]\n`);
  return [
    `api:\n  base_url: ${url}\n  key_file: ./api-key\n`,
    `state:\n  dir: ./state\n`,
    `log:\n  level: info\n`, // its "running" line names the feed's address
    `http:\n  port: 0\n`,
    // Every second: the pull starts within a second of the injection, as the default (every minute) would within a minute.
    `pull:\n  approved_prices:\n    schedule: "* * * * * *"\n    reconcile:\n      schedule: "0 0 1 1 *"\n`,
    // Every till of the bench connects from 127.0.0.1: one address, where a chain's tills have one each.
    `feed:\n  listen: 127.0.0.1:0\n  max_connections_per_address: ${plan.length + 100}\n  consumers:\n${consumers.join('')}`,
  ].join('');
}

async function startSandbox(stores: number): Promise<{ child: ChildProcess; url: string; key: string; stores: string[] }> {
  const child = fork(new URL('./sandbox-server.ts', import.meta.url), ['--stores', String(stores)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const info = await new Promise<{ url: string; apiKey: string; stores: string[] }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { url: string; apiKey: string; stores: string[] }));
    child.once('exit', (code) => reject(new Error(`the sandbox exited with ${String(code)}`)));
  });
  return { child, url: info.url, key: info.apiKey, stores: info.stores };
}

/** `pricing-agent run` from the compiled tree; resolves with its feed and metrics URLs once it is running. */
async function startAgent(main: string, dir: string): Promise<{ child: ChildProcess; feedUrl: string; metricsUrl: string }> {
  // The flags the agent is deployed with (src/cli/main.ts shebang, the systemd unit, the Dockerfile).
  const profile = values.profile === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${values.profile}`];
  const flags = ['--max-semi-space-size=8', '--max-old-space-size=1536', ...profile];
  const child = spawn(process.execPath, [...flags, main, 'run', '--config', join(dir, 'pricing-agent.yaml')], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const feedUrl = /"feed":"(http:\/\/[^"]+)"/.exec(out)?.[1];
      const http = /"http":"(http:\/\/[^"]+)"/.exec(out)?.[1];
      if (feedUrl && http) resolve({ child, feedUrl, metricsUrl: `${http}/metrics` });
      if (out.length > 1_000_000) out = out.slice(-10_000);
    });
    child.once('exit', (code) => reject(new Error(`the agent exited with ${String(code)}: ${out.slice(-2000)}`)));
  });
}

async function untilMetric(url: string, pattern: RegExp, ok: (n: number) => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const res = await request(url);
    const n = Number(pattern.exec(await res.body.text())?.[1] ?? NaN);
    if (ok(n)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${n})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Injects `count` store-level approvals spread over `stores` (the sandbox picks a store for each at random). */
async function inject(url: string, count: number, stores: string[]): Promise<void> {
  const res = await request(`${url}/_sandbox/approvals`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ count, stores, product_level_share: 0 }),
  });
  await res.body.dump();
  if (res.statusCode !== 201) throw new Error(`inject answered ${res.statusCode}`);
}

/** Every consumer received exactly the rows of its store in the agent's feed, and the feed holds every approval. */
function checkEveryRowOnce(dbPath: string, plan: readonly Consumer[], perConsumer: readonly number[], approvals: number): void {
  const db = new Database(dbPath, { readonly: true });
  try {
    const counts = new Map(
      (db.prepare('SELECT store_id, count(*) AS n FROM price_feed GROUP BY store_id').all() as { store_id: string; n: number }[]).map((r) => [r.store_id, r.n]),
    );
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    if (total !== approvals) throw new Error(`the feed holds ${total} rows, ${approvals} approvals were injected`);
    plan.forEach((c, i) => {
      if (perConsumer[i] !== (counts.get(c.store) ?? 0)) {
        throw new Error(`consumer ${i} received ${perConsumer[i]} rows; its store has ${counts.get(c.store) ?? 0} in the feed`);
      }
    });
  } finally {
    db.close();
  }
}

/** An unref'd timer: the last one, the wait for the children's exits, kept this process alive for its whole minute. */
function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function peakRssMb(pid: number): number {
  const kb = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Math.round(Number(kb ?? 0) / 1024);
}

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks (100 per second on Linux)
}
