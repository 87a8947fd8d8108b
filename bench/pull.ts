/**
 * `npm run bench:pull`: 100,000 approvals from the sandbox into the outbox, by the agent's pull (replayable
 * intents, one transaction per page with the feed, acknowledgements in batches of 500) and, beside it in the same
 * run, by a minimal loop (deliveries pages of 500 + prepared-statement inserts + acknowledge, nothing else) against
 * a second sandbox with the same seed. The minimal loop writes the same outbox rows as the agent (approved_prices and
 * price_feed, same schema and pragmas) with hand-written prepared statements, so the ratio is the cost of the
 * agent's machinery (intents, validation, acknowledgement state, conflict handling); a third line shows the floor
 * of a bare (id, record) table. Each side runs in a fresh child process (this file compiled to JavaScript as the
 * agent ships, with the agent's production Node flags),
 * one after the other, while both sandboxes run in children of their own (`pricing-agent sandbox`); the best of
 * `--rounds` rounds counts. Ends with exactly one line:
 *
 *   bench:pull agent=<rows/s> minimal=<rows/s> ratio=<x.xx> agent_rss_mb=<n>
 *
 *   node bench/pull.ts [--approvals 100000] [--rounds 2] [--backend postgres] [--profile DIR]
 * Target: ratio >= 0.8.
 *
 * --backend postgres: each round also runs the agent with its state in PostgreSQL (a throwaway cluster on this
 * machine, durable like a production server: bench/postgres-target.ts) against the agent's sandbox reset again, and
 * the last line adds `agent_postgres=<rows/s> backend_ratio=<PostgreSQL over SQLite>` (target >= 0.7).
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool, request } from 'undici';
import { ApiClient } from '../src/api/client.ts';
import { createDispatcher } from '../src/api/dispatcher.ts';
import { systemClock } from '../src/clock.ts';
import { createLogger } from '../src/log.ts';
import { runApprovedPricesPull } from '../src/pull/approved-prices.ts';
import type { ApprovedPrice } from '../src/api/schemas/index.ts';
import { openStateDb } from '../src/store/open-state-db.ts';
import { openSqlite } from '../src/store/sqlite/open-sqlite.ts';
import { compileForBench } from './compiled.ts';
import { BACKENDS, benchState, startBenchPostgres } from './postgres-target.ts';

const { values } = parseArgs({
  options: {
    approvals: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '2' },
    role: { type: 'string' },
    backend: { type: 'string', default: 'sqlite' },
    'pg-url': { type: 'string' },
    'pg-schema': { type: 'string' },
    url: { type: 'string' },
    key: { type: 'string' },
    dir: { type: 'string' },
    /** A directory: each agent side writes a V8 CPU profile there (open it in Chrome's DevTools). */
    profile: { type: 'string' },
  },
});

interface Result {
  rows: number;
  seconds: number;
  maxRssMb: number;
  /** CPU time of the side's process (user + system) over the whole process life, seconds. */
  cpuSeconds: number;
}

type Side = Pick<Result, 'rows' | 'seconds'>;

const PAGE = 500;
const CLI = new URL('../src/cli/main.ts', import.meta.url).pathname; // before the top-level await below

if (values.role === 'agent') await report(agent);
else if (values.role === 'minimal') await report(minimal);
else if (values.role === 'floor') await report((url, key, dir) => minimal(url, key, dir, true));
else await main();

/** Runs one side in this (child) process and sends its result to the parent. */
async function report(side: (url: string, key: string, dir: string) => Promise<Side>): Promise<void> {
  const result = await side(values.url ?? '', values.key ?? '', values.dir ?? '');
  const usage = process.resourceUsage();
  const cpuSeconds = (usage.userCPUTime + usage.systemCPUTime) / 1e6;
  process.send?.({ ...result, maxRssMb: Math.round(usage.maxRSS / 1024), cpuSeconds } satisfies Result);
  process.disconnect?.();
}

/** The agent's pull, as the daemon and `pull --once` run it: the same functions, database and client set-up. */
async function agent(url: string, key: string, dir: string): Promise<Side> {
  const postgres = values['pg-url'] === undefined ? null : { url: values['pg-url'], schema: values['pg-schema'] ?? 'bench' };
  const db = await openStateDb(benchState(dir, postgres));
  const dispatcher = createDispatcher({ maxConnections: 4 });
  const client = new ApiClient({ baseUrl: url, apiKey: key, dispatcher });
  const logger = createLogger({ level: 'warn', destination: 2 });
  const started = performance.now();
  const summary = await runApprovedPricesPull({ db, client, clock: systemClock, logger }, undefined, { pageSize: PAGE });
  const seconds = (performance.now() - started) / 1000;
  if (summary.acks.acknowledged !== summary.deliveries.inserted) throw new Error('agent: not every row acknowledged');
  await db.close();
  await dispatcher.close();
  return { rows: summary.deliveries.inserted, seconds };
}

/**
 * The minimal loop: deliveries pages of 500, the same outbox rows the agent writes (approved_prices and a 'price'
 * row in price_feed per version, in a database migrated like the agent's, same pragmas) by hand-written prepared
 * statements in one transaction per page, then acknowledge the page's ids. No intents, no validation, no
 * acknowledgement state, no conflict handling. `floor` instead writes only (id, record) into a bare table.
 */
async function minimal(url: string, key: string, dir: string, floor = false): Promise<Side> {
  const state = await openSqlite(join(dir, floor ? 'floor.db' : 'minimal.db'));
  const db = state.sqlite;
  db.exec('CREATE TABLE IF NOT EXISTS floor (id INTEGER PRIMARY KEY, record TEXT NOT NULL) STRICT');
  const insertFloor = db.prepare('INSERT OR IGNORE INTO floor (id, record) VALUES (?, ?)');
  const insertVersion = db.prepare(
    `INSERT OR IGNORE INTO approved_prices (id, grid_id, grid_item_id, item_id, sku, store_id, current_price,
       proposed_price, approved_price, effective_date, currency_code, proposal_source, source, approved_at,
       approved_by_user_id, export_status, exported_at, cancelled_at, predecessor_id, amendment_reason,
       delivery_channel, record, received_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertFeed = db.prepare(
    `INSERT INTO price_feed (kind, approval_id, predecessor_id, item_id, sku, store_id, approved_price,
       currency_code, effective_date, recorded_at) VALUES ('price', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const storePage = db.transaction((items: Wire[]) => {
    const now = new Date().toISOString();
    for (const a of items) {
      if (floor) {
        insertFloor.run(a.id, JSON.stringify(a));
        continue;
      }
      const inserted = insertVersion.run(
        a.id, a.grid_id, a.grid_item_id, a.item_id, a.sku, a.store_id, a.current_price, a.proposed_price,
        a.approved_price, a.effective_date, a.currency_code, a.proposal_source, a.source, a.approved_at,
        a.approved_by_user_id, a.export_status, a.exported_at ?? null, a.cancelled_at ?? null,
        a.predecessor_id ?? null, a.amendment_reason ?? null, a.delivery_channel ?? null, JSON.stringify(a), now,
      ).changes;
      if (inserted === 1) {
        insertFeed.run(a.id, a.predecessor_id ?? null, a.item_id, a.sku, a.store_id, a.approved_price,
          a.currency_code, a.effective_date, now);
      }
    }
  });
  const pool = new Pool(url, { connections: 1, allowH2: false });
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const post = async (path: string, body: unknown): Promise<unknown> => {
    const res = await pool.request({ path, method: 'POST', headers, body: JSON.stringify(body) });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}: ${text.slice(0, 200)}`);
    return JSON.parse(text);
  };
  const started = performance.now();
  let rows = 0;
  let cursor: string | null = null;
  do {
    const pagination: { limit: number; cursor?: string } = cursor === null ? { limit: PAGE } : { limit: PAGE, cursor };
    const page = (await post('/v1/approved_prices/deliveries', { request_id: randomUUID(), pagination })) as {
      items: Wire[];
      next_cursor: string | null;
    };
    storePage(page.items);
    if (page.items.length > 0) await post('/v1/approved_prices/acknowledge', { approval_ids: page.items.map((i) => i.id) });
    rows += page.items.length;
    cursor = page.next_cursor;
  } while (cursor !== null);
  const seconds = (performance.now() - started) / 1000;
  await state.close();
  await pool.close();
  return { rows, seconds };
}

/** An approved price as the wire carries it (the minimal loop does not validate). */
type Wire = ApprovedPrice;

/** `pricing-agent sandbox` in a child process; resolves with its URL and key once it serves. */
function startSandbox(approvals: string): Promise<{ child: ChildProcess; url: string; key: string }> {
  const child = spawn(process.execPath, [CLI, 'sandbox', '--port', '0', '--seed', '1', '--approvals', approvals], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const url = /^PRICING_API_URL=(.+)$/m.exec(out)?.[1];
      const key = /^PRICING_API_KEY=(.+)$/m.exec(out)?.[1];
      if (url && key) resolve({ child, url, key });
    });
    child.once('exit', (code) => reject(new Error(`sandbox exited with ${String(code)}`)));
  });
}

function runSide(worker: string, role: 'agent' | 'minimal' | 'floor', url: string, key: string, dir: string, postgres?: { url: string; schema: string }): Promise<Result> {
  const pg = postgres ? ['--pg-url', postgres.url, '--pg-schema', postgres.schema] : [];
  const profile = role === 'agent' && values.profile !== undefined ? ['--cpu-prof', `--cpu-prof-dir=${values.profile}`] : [];
  const child = fork(worker, ['--role', role, '--url', url, '--key', key, '--dir', dir, ...pg], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // The flags the agent is deployed with (src/cli/main.ts shebang, systemd unit, Dockerfile), for every side.
    execArgv: ['--max-semi-space-size=8', '--max-old-space-size=1536', ...profile],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (message) => resolve(message as Result));
    child.once('exit', (code) => reject(new Error(`${role} exited with ${String(code)} before reporting`)));
  });
}

/** Back to the seeded state (every approval pending again), through the sandbox's control plane. */
async function reset(url: string): Promise<void> {
  const res = await request(`${url}/_sandbox/reset`, { method: 'POST' });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`reset answered ${res.statusCode}`);
}

function rate(r: Result): number {
  return Math.round(r.rows / r.seconds);
}

function best(results: Result[]): Result {
  return results.reduce((a, b) => (rate(b) > rate(a) ? b : a));
}

/**
 * Rounds of agent then minimal, each side against its own sandbox reset to the seeded state, each run in a fresh
 * process with a fresh database; the best round of each side counts (the machine is shared: the best round is the
 * one least disturbed). Peak RSS is the agent's largest over the rounds.
 */
async function main(): Promise<void> {
  // Every side runs this file compiled to JavaScript, as the agent ships (bench/compiled.ts).
  const backend = BACKENDS.find((b) => b === values.backend);
  if (backend === undefined) throw new Error(`--backend must be sqlite or postgres, got ${values.backend}`);
  const compiled = await compileForBench();
  const worker = compiled.path(import.meta.url);
  const cluster = backend === 'postgres' ? await startBenchPostgres() : null;
  const sandboxes = await Promise.all([startSandbox(values.approvals), startSandbox(values.approvals)]);
  const dirs: string[] = [];
  const fresh = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'pa-bench-pull-'));
    dirs.push(dir);
    return dir;
  };
  try {
    const [forAgent, forMinimal] = sandboxes;
    if (!forAgent || !forMinimal) throw new Error('sandboxes did not start');
    const agents: Result[] = [];
    const minimals: Result[] = [];
    const postgresAgents: Result[] = [];
    for (let round = 0; round < Number(values.rounds); round += 1) {
      if (round > 0) await Promise.all([reset(forAgent.url), reset(forMinimal.url)]);
      agents.push(await runSide(worker, 'agent', forAgent.url, forAgent.key, fresh()));
      minimals.push(await runSide(worker, 'minimal', forMinimal.url, forMinimal.key, fresh()));
      const [a, m] = [agents[round] as Result, minimals[round] as Result];
      let text = `round ${round + 1}: agent ${rate(a)} rows/s (${a.cpuSeconds.toFixed(1)} s CPU), minimal ${rate(m)} rows/s (${m.cpuSeconds.toFixed(1)} s CPU)`;
      if (cluster) {
        await reset(forAgent.url);
        const p = await runSide(worker, 'agent', forAgent.url, forAgent.key, fresh(), { url: cluster.url, schema: `bench_pull_${round}` });
        postgresAgents.push(p);
        text += `, agent on PostgreSQL ${rate(p)} rows/s (${p.cpuSeconds.toFixed(1)} s CPU)`;
      }
      console.log(text);
    }
    await reset(forMinimal.url);
    const floor = await runSide(worker, 'floor', forMinimal.url, forMinimal.key, fresh());
    const a = best(agents);
    const m = best(minimals);
    if (a.rows !== m.rows) throw new Error(`the two sides pulled different row counts: ${a.rows} vs ${m.rows}`);
    const rss = Math.max(...agents.map((r) => r.maxRssMb));
    console.log(`agent    ${a.rows} rows in ${a.seconds.toFixed(2)} s (best of ${agents.length}), peak RSS ${rss} MB`);
    console.log(`minimal  ${m.rows} rows in ${m.seconds.toFixed(2)} s (best of ${minimals.length}), peak RSS ${m.maxRssMb} MB`);
    console.log(`floor    ${floor.rows} rows in ${floor.seconds.toFixed(2)} s: ${rate(floor)} rows/s into a bare (id, record) table`);
    let last = `bench:pull agent=${rate(a)} minimal=${rate(m)} ratio=${(rate(a) / rate(m)).toFixed(2)} agent_rss_mb=${rss}`;
    if (postgresAgents.length > 0) {
      const p = best(postgresAgents);
      if (p.rows !== a.rows) throw new Error(`the agent pulled ${p.rows} rows on PostgreSQL, ${a.rows} on SQLite`);
      last += ` agent_postgres=${rate(p)} backend_ratio=${(rate(p) / rate(a)).toFixed(2)}`;
    }
    console.log(last);
  } finally {
    for (const s of sandboxes) s.child.kill('SIGTERM');
    cluster?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    await compiled.remove();
  }
}
