/**
 * `npm run bench:push`: a transactions CSV through the agent's push pipeline (pushFile: claim with sha256, streaming
 * read, mapping and validation, bulk batches of 1000 on 4 connections, a SQLite checkpoint per batch, report,
 * archive) against a minimal loop doing only the necessary work (csv-parse, the zod TransactionWrite schema, an undici
 * Pool with 4 connections, batches of 1000, no checkpoints). Both send the same file to a fresh sandbox.
 *
 * Every contender runs in a child process of its own (this file compiled to JavaScript as the agent ships, see
 * bench/compiled.ts, with --worker), so its peak RSS is its own, and the sandbox runs in another child
 * (bench/sandbox-server.ts), so its CPU does not share the contender's event loop. The clock starts once the agent
 * has loaded and opened its database (once per agent start, not per file).
 * Then the agent pushes a file 4x as large, to show that its memory does not grow with the file.
 *
 *   node bench/push.ts [--rows 1000000] [--rounds 2] [--quick] [--backend postgres] [--node-flags="--cpu-prof --cpu-prof-dir=prof"]
 *
 * --backend postgres: each round also runs the agent with its state in PostgreSQL (a throwaway cluster on this
 * machine, durable like a production server: bench/postgres-target.ts), and the last line adds
 * `agent_postgres=<rows/s> backend_ratio=<PostgreSQL over SQLite>` (target >= 0.7).
 *
 * --rounds: rounds of minimal then agent, the best of each counts; --quick skips the 4x run; --node-flags are given to
 * both contenders' processes (profiling, GC settings; default the production flags, see src/cli/main.ts);
 * --sync-normal (diagnosis) runs the agent's database at synchronous=NORMAL to show what the per-batch fsync costs;
 * --memory (diagnosis) prints where each contender's memory was, over time (bench/memory-sampler.ts).
 *
 * Ends with one line: bench:push agent=<rows/s> minimal=<rows/s> ratio=<x.xx> agent_rss_mb=<peak of the agent runs>
 * Targets: ratio >= 0.9; agent peak RSS <= 200 MB and within 10 % between the two sizes.
 */
import { createReadStream } from 'node:fs';
import { link, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { parse } from 'csv-parse';
import { Pool } from 'undici';
import { TransactionWrite } from '../src/api/schemas/index.ts';
import { transactionsFile } from '../test/fixtures/push/push-fixtures.ts';
import { compileForBench } from './compiled.ts';
import { CHILD_OPTIONS, forkSandbox, runChild } from './children.ts';
import { pushModules } from './push-modules.ts';
import { BACKENDS, type Backend, benchState, startBenchPostgres, type BenchPostgres } from './postgres-target.ts';

const BATCH = 1000;
const CONNECTIONS = 4;

interface Target {
  url: string;
  apiKey: string;
}

interface WorkerResult {
  rows: number;
  seconds: number;
  /** CPU time of the contender's process (user + system): less sensitive than wall time to a busy machine. */
  cpuSeconds: number;
  peakRssMb: number;
  /** With `--memory`: where the memory was (bench/memory-sampler.ts describeMemory). */
  memory?: string;
}

// ---------------------------------------------------------------------------------------------- the contenders

/**
 * The agent: pushFile in this process, as the daemon and `push` run it. Loading the modules and opening the state
 * database happen once when the agent starts, not per file, so they are done here, before the clock starts.
 */
/** The agent's state in PostgreSQL for a `--backend postgres` run (a schema of the bench cluster), else null. */
type PostgresRun = { url: string; schema: string } | null;

async function agentWorker(target: Target, file: string, dir: string, syncNormal: boolean, postgres: PostgresRun): Promise<() => Promise<number>> {
  const { ApiClient, createDispatcher, SourceSchema, compileSource, pushFile, openSqlite, databasePath, createLogger, systemClock } = await pushModules();
  const { openStateDb } = await import('../src/store/open-state-db.ts');

  const inbox = join(dir, 'inbox');
  const config = SourceSchema.parse({ name: 'bench', entity: 'transactions', path: inbox, batch_size: BATCH });
  const source = { name: 'bench', entity: 'transactions', mode: 'bulk' as const, inbox, batchSize: BATCH, read: compileSource(config) };
  const sqlite = postgres === null ? await openSqlite(databasePath(join(dir, 'state'))) : null;
  // Diagnosis only (--sync-normal): what the per-batch fsync of synchronous=FULL costs the push.
  if (syncNormal) sqlite?.sqlite.pragma('synchronous = NORMAL');
  const db = sqlite ?? (await openStateDb(benchState(join(dir, 'state'), postgres)));
  const dispatcher = createDispatcher({ maxConnections: CONNECTIONS });
  const client = new ApiClient({ baseUrl: target.url, apiKey: target.apiKey, dispatcher });
  const logger = createLogger({ level: 'warn', destination: 2 });
  return async () => {
    try {
      const result = await pushFile({ db, client, clock: systemClock, logger, maxInFlight: CONNECTIONS }, source, file);
      if (result.outcome !== 'done') throw new Error(`the agent ended the file as ${result.outcome}: ${JSON.stringify(result)}`);
      return result.file.rows_accepted ?? 0;
    } finally {
      await dispatcher.close();
      await db.close();
    }
  };
}

/** The minimal loop: parse, validate, batch, send; nothing recorded, nothing reported. */
async function minimalWorker(target: Target, file: string): Promise<number> {
  const pool = new Pool(target.url, { connections: CONNECTIONS, pipelining: 1 });
  const headers = { authorization: `Bearer ${target.apiKey}`, 'content-type': 'application/json' };
  const inFlight = new Set<Promise<void>>();
  let accepted = 0;
  const send = async (items: unknown[]): Promise<void> => {
    const res = await pool.request({ path: '/v1/transactions/bulk', method: 'POST', headers, body: JSON.stringify({ items }) });
    const body = (await res.body.json()) as { results: { ok: boolean }[] };
    if (res.statusCode !== 200) throw new Error(`bulk answered ${res.statusCode}`);
    for (const r of body.results) if (r.ok) accepted += 1;
  };
  let batch: unknown[] = [];
  const flush = async (): Promise<void> => {
    const items = batch;
    batch = [];
    while (inFlight.size >= CONNECTIONS) await Promise.race(inFlight);
    const task: Promise<void> = send(items).finally(() => inFlight.delete(task));
    inFlight.add(task);
  };
  const parser = createReadStream(file).pipe(parse({ columns: true, bom: true }));
  for await (const raw of parser as AsyncIterable<Record<string, string>>) {
    const row: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(raw)) {
      if (value === '') continue;
      row[key] = key === 'is_promo' ? value === 'true' : value;
    }
    const parsed = TransactionWrite.safeParse(row);
    if (!parsed.success) continue;
    batch.push(parsed.data);
    if (batch.length === BATCH) await flush();
  }
  if (batch.length > 0) await flush();
  await Promise.all(inFlight);
  await pool.close();
  return accepted;
}

async function runWorker(kind: string, target: Target, file: string, dir: string, syncNormal: boolean, postgres: PostgresRun, memory: boolean): Promise<void> {
  const sampler = memory ? (await import('./memory-sampler.ts')).sampleMemory() : null;
  const run = kind === 'agent' ? await agentWorker(target, file, dir, syncNormal, postgres) : () => minimalWorker(target, file);
  const started = performance.now();
  const cpu = process.cpuUsage();
  const rows = await run();
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const result: WorkerResult = { rows, seconds, cpuSeconds: (used.user + used.system) / 1e6, peakRssMb: process.resourceUsage().maxRSS / 1024 };
  if (sampler !== null) result.memory = (await import('./memory-sampler.ts')).describeMemory(sampler.stop(), 1000);
  process.send?.(result);
}

// ---------------------------------------------------------------------------------------------- the orchestrator

/** One contender against a fresh sandbox, in its own process. */
interface RunOptions {
  /** This file, compiled (bench/compiled.ts): the contenders run as shipped JavaScript. */
  readonly worker: string;
  readonly nodeFlags: string[];
  readonly syncNormal: boolean;
  /** Sample the contenders' memory (bench/memory-sampler.ts) and print where it was. */
  readonly memory: boolean;
}

async function contender(kind: 'agent' | 'minimal', file: string, dir: string, options: RunOptions, postgres: PostgresRun = null): Promise<WorkerResult> {
  const sandbox = await forkSandbox();
  try {
    const args = ['--worker', kind, '--url', sandbox.url, '--key', sandbox.apiKey, '--file', file, '--dir', dir];
    if (options.syncNormal) args.push('--sync-normal');
    if (options.memory) args.push('--memory');
    if (postgres) args.push('--pg-url', postgres.url, '--pg-schema', postgres.schema);
    return await runChild<WorkerResult>(options.worker, args, [...process.execArgv, ...options.nodeFlags], kind);
  } finally {
    await sandbox.stop();
  }
}

/** A generated file of `rows` transactions. */
async function generate(root: string, name: string, rows: number): Promise<string> {
  const file = join(root, `${name}.csv`);
  await transactionsFile(file, rows, { prefix: name });
  return file;
}

/** `file` hard-linked into a fresh inbox for one agent run (the agent moves it to its archive). */
async function agentCopy(root: string, file: string, run: string): Promise<{ agentDir: string; agentFile: string }> {
  const agentDir = join(root, `agent-${run}`);
  await mkdir(join(agentDir, 'inbox'), { recursive: true });
  const agentFile = join(agentDir, 'inbox', basename(file));
  await link(file, agentFile);
  return { agentDir, agentFile };
}

const perSecond = (r: WorkerResult) => Math.round(r.rows / r.seconds);
const best = (results: WorkerResult[]) => results.reduce((a, b) => (perSecond(b) > perSecond(a) ? b : a));
const fmt = (n: number) => n.toLocaleString('en-US');
function line(label: string, r: WorkerResult): string {
  return (r.memory === undefined ? '' : `${label}: memory\n${r.memory}\n`) + `${label.padEnd(12)} ${fmt(r.rows).padStart(10)} rows in ${r.seconds.toFixed(1).padStart(6)} s  ${fmt(perSecond(r)).padStart(9)} rows/s  CPU ${r.cpuSeconds.toFixed(1).padStart(5)} s  peak RSS ${r.peakRssMb.toFixed(0)} MB`;
}

async function orchestrate(rows: number, rounds: number, quick: boolean, options: RunOptions, backend: Backend): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'pa-bench-push-'));
  let cluster: BenchPostgres | null = null;
  try {
    if (backend === 'postgres') cluster = await startBenchPostgres();
    console.log(`bench:push  ${fmt(rows)} transactions, batches of ${BATCH}, ${CONNECTIONS} connections, sandbox in its own process`);
    if (options.syncNormal) console.log('EXPERIMENT: the state database of the agent at synchronous=NORMAL (not how the agent ships)');
    const base = await generate(root, 'm1', rows);
    // Rounds of minimal then agent; the best round of each counts (the machine is shared: the best round is the
    // one least disturbed). Peak RSS is the agent's largest over all its runs.
    const minimals: WorkerResult[] = [];
    const agents: WorkerResult[] = [];
    const postgresAgents: WorkerResult[] = [];
    for (let round = 1; round <= rounds; round += 1) {
      const m = await contender('minimal', base, root, options);
      console.log(line(`minimal #${round}`, m));
      const copy = await agentCopy(root, base, `m1-${round}`);
      const a = await contender('agent', copy.agentFile, copy.agentDir, options);
      console.log(line(`agent #${round}`, a));
      if (a.rows !== rows || m.rows !== rows) throw new Error(`rows accepted: agent ${a.rows}, minimal ${m.rows}, expected ${rows}`);
      minimals.push(m);
      agents.push(a);
      if (cluster) {
        // The same file, the same work, the state in PostgreSQL (a fresh schema per round).
        const pgCopy = await agentCopy(root, base, `m1-${round}-pg`);
        const p = await contender('agent', pgCopy.agentFile, pgCopy.agentDir, options, { url: cluster.url, schema: `bench_${round}` });
        console.log(line(`agent pg #${round}`, p));
        if (p.rows !== rows) throw new Error(`rows accepted by the agent on PostgreSQL: ${p.rows}, expected ${rows}`);
        postgresAgents.push(p);
      }
    }
    const minimal = best(minimals);
    const agent = best(agents);
    let peak = Math.max(...agents.map((a) => a.peakRssMb));
    if (!quick) {
      await rm(base);
      const big = await generate(root, 'm4', rows * 4);
      const copy = await agentCopy(root, big, 'm4');
      const large = await contender('agent', copy.agentFile, copy.agentDir, options);
      const growth = ((large.peakRssMb - peak) / peak) * 100;
      console.log(`${line('agent 4x', large)}  (${growth >= 0 ? '+' : ''}${growth.toFixed(1)} % vs the peak at ${fmt(rows)} rows)`);
      peak = Math.max(peak, large.peakRssMb);
    }
    const ratio = perSecond(agent) / perSecond(minimal);
    let last = `bench:push agent=${perSecond(agent)} minimal=${perSecond(minimal)} ratio=${ratio.toFixed(2)} agent_rss_mb=${Math.round(peak)}`;
    if (postgresAgents.length > 0) {
      const onPostgres = best(postgresAgents);
      last += ` agent_postgres=${perSecond(onPostgres)} backend_ratio=${(perSecond(onPostgres) / perSecond(agent)).toFixed(2)}`;
    }
    console.log(last);
  } finally {
    cluster?.stop();
    await rm(root, { recursive: true, force: true });
  }
}

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '2' },
    quick: { type: 'boolean', default: false },
    'sync-normal': { type: 'boolean', default: false },
    memory: { type: 'boolean', default: false },
    backend: { type: 'string', default: 'sqlite' },
    'pg-url': { type: 'string' },
    'pg-schema': { type: 'string' },
    ...CHILD_OPTIONS,
  },
});

if (values.worker !== undefined) {
  const target = { url: values.url ?? '', apiKey: values.key ?? '' };
  const postgres = values['pg-url'] === undefined ? null : { url: values['pg-url'], schema: values['pg-schema'] ?? 'bench' };
  await runWorker(values.worker, target, values.file ?? '', values.dir ?? '', values['sync-normal'], postgres, values.memory);
  process.disconnect?.();
} else {
  const nodeFlags = values['node-flags'].split(' ').filter((f) => f !== '');
  const compiled = await compileForBench();
  try {
    const worker = compiled.path(import.meta.url);
    const backend = BACKENDS.find((b) => b === values.backend);
    if (backend === undefined) throw new Error(`--backend must be sqlite or postgres, got ${values.backend}`);
    await orchestrate(Number(values.rows), Number(values.rounds), values.quick, { worker, nodeFlags, syncNormal: values['sync-normal'], memory: values.memory }, backend);
  } finally {
    await compiled.remove();
  }
}
