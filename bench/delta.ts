/**
 * `npm run bench:delta`: delta push of a full nightly export, as issue 13 specifies it. Day 1 pushes 1,000,000
 * product_store rows; day 2 is the same export with 1 % of the prices changed and 0.1 % new rows. Day 2 is pushed by
 * the agent with delta (what it does every night) and, in the same run, by a plain push of the same file (delta off:
 * every row sent). Both run as compiled JavaScript in child processes of their own (bench/compiled.ts), with the
 * production Node flags, against one sandbox in its own process that holds day 1.
 *
 * Printed for day 2: requests, rows and request bytes sent, wall time, the agent's peak RSS, and the state's bytes
 * on disk per key (dbstat: every page of delta_keys). Each contender pushes day 2 `--repeat` times (3), and times and peaks
 * are compared as medians. Then the same with a quarter of the keys, to show that the delta push's memory does not
 * grow with the number of keys. Ends with one line (time_share: the median delta push over the median plain push):
 *
 *   bench:delta rows_sent_share=R bytes_share=B time_share=T agent_rss_mb=M state_bytes_per_key=K
 *
 * Targets: rows_sent_share <= 0.012, bytes_share <= 0.02, time_share <= 0.2 (of the plain push); peak RSS within
 * 10 % of the plain push's; at most 64 bytes of state per key; memory flat in the number of keys.
 *
 *   node bench/delta.ts [--rows 1000000] [--repeat 3] [--node-flags="..."] [--keep DIR]
 *   node bench/delta.ts --from DIR [--repeat 3] [--node-flags="..."]
 *   ... --memory: also print where each push's memory was, over time (bench/memory-sampler.ts): the process's RSS,
 *       each thread's V8 heap and ArrayBuffers. The sampling costs a little CPU: not for time_share figures.
 *
 * For comparing two versions of the agent on the same state (an A/B while working on day 2's time): `--keep DIR` also
 * saves the state after day 1 and the day-2 file in DIR; `--from DIR` then only pushes that day-2 file with delta,
 * `--repeat` times, each time on a fresh copy of the saved state and a fresh sandbox (which lacks day 1: its 11,000
 * rows are created, not updated), and prints its wall time. No share is printed: there is no plain push to share
 * against.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { copyFile, cp, mkdir, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import { compileForBench } from './compiled.ts';
import { CHILD_OPTIONS, forkSandbox, runChild } from './children.ts';
import { pushModules } from './push-modules.ts';

const BATCH = 1000;
const CONNECTIONS = 4;
const STORES = 20;

interface Target {
  url: string;
  apiKey: string;
  stores: string[];
}

interface DayResult {
  requests: number;
  rows: number;
  bytes: number;
  seconds: number;
  peakRssMb: number;
  sent: number;
  unchanged: number;
  /** With `--memory`: where the memory was (bench/memory-sampler.ts describeMemory). */
  memory?: string;
}

// ---------------------------------------------------------------------------------------------- the worker

/** One push of `file` by the agent (pushFile, as the daemon runs it), with delta on or off; reports what it sent. */
async function pushWorker(target: Target, file: string, stateDir: string, inbox: string, delta: boolean, memory: boolean): Promise<DayResult> {
  const sampler = memory ? (await import('./memory-sampler.ts')).sampleMemory() : null;
  const { ApiClient, createDispatcher, SourceSchema, compileSource, pushFile, openSqlite, databasePath, createLogger, systemClock } = await pushModules();
  const { sourceDelta } = await import('../src/ingest/delta/source-delta.ts');
  const { deltaFile } = await import('../src/store/delta-state.ts');

  const config = SourceSchema.parse({ name: 'bench', entity: 'product_store', path: inbox, batch_size: BATCH, delta, brakes: false });
  const source = { name: 'bench', entity: 'product_store', mode: 'bulk' as const, inbox, batchSize: BATCH, read: compileSource(config), ...sourceDelta(config) };
  const db = await openSqlite(databasePath(stateDir));
  let requests = 0;
  let bytes = 0;
  // Counts what goes over the wire to the bulk endpoint: the request bodies as built (no second serialisation).
  const dispatcher = createDispatcher({ maxConnections: CONNECTIONS }).compose((dispatch) => (options, handler) => {
    if (options.path.endsWith('/bulk')) {
      requests += 1;
      const body = options.body;
      bytes += typeof body === 'string' ? Buffer.byteLength(body) : body instanceof Uint8Array ? body.byteLength : 0;
    }
    return dispatch(options, handler);
  });
  const client = new ApiClient({ baseUrl: target.url, apiKey: target.apiKey, dispatcher });
  let rows = 0;
  const bulk = client.productStore.bulk;
  const counted = Object.assign(Object.create(client) as typeof client, {
    productStore: { ...client.productStore, bulk: (items: Parameters<typeof bulk>[0], o?: Parameters<typeof bulk>[1]) => ((rows += items.length), bulk(items, o)) },
  });
  const logger = createLogger({ level: 'warn', destination: 2 });
  const started = performance.now();
  try {
    const result = await pushFile({ db, client: counted, clock: systemClock, logger, maxInFlight: CONNECTIONS }, source, file);
    if (result.outcome !== 'done') throw new Error(`the agent ended the file as ${result.outcome}: ${JSON.stringify(result)}`);
    const seconds = (performance.now() - started) / 1000;
    return {
      requests,
      rows,
      bytes,
      seconds,
      peakRssMb: process.resourceUsage().maxRSS / 1024,
      sent: result.file.rows_sent ?? 0,
      unchanged: (await deltaFile(db, result.file.id))?.unchanged ?? 0,
      ...(sampler === null ? {} : { memory: (await import('./memory-sampler.ts')).describeMemory(sampler.stop()) }),
    };
  } finally {
    await dispatcher.close();
    await db.close();
  }
}

// ---------------------------------------------------------------------------------------------- the orchestrator

function price(i: number, day: number): string {
  // 1 % of the rows (every 100th) get a new price on day 2.
  const cents = 100 + (i % 4900) + (day === 2 && i % 100 === 37 ? 7 : 0);
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

/** `rows` rows of day `day` (day 2: 1 % prices changed, 0.1 % new rows at the end). */
async function generate(path: string, rows: number, day: 1 | 2, stores: readonly string[]): Promise<number> {
  const out = createWriteStream(path);
  out.write('item_id,store_id,current_price,regular_price,currency,stock_on_hand,price_effective_date\n');
  const total = day === 1 ? rows : rows + Math.round(rows / 1000);
  let chunk = '';
  for (let i = 0; i < total; i += 1) {
    const item = `ITEM-${String(Math.floor(i / STORES)).padStart(7, '0')}`;
    chunk += `${item},${stores[i % STORES]},${price(i, day)},${price(i + 13, 1)},EUR,${i % 300},2026-11-20\n`;
    if (chunk.length > 64 * 1024) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
  return total;
}

interface RunOptions {
  readonly worker: string;
  readonly nodeFlags: string[];
  /** Sample the pushes' memory (bench/memory-sampler.ts) and print where it was. */
  readonly memory: boolean;
  /** How many times each contender pushes day 2. */
  readonly day2Runs: number;
}

/** One push in a child process of its own (its peak RSS is its own). `file` is copied into the inbox first. */
async function push(options: RunOptions, target: { url: string; apiKey: string }, file: string, dir: string, name: string, delta: boolean): Promise<DayResult> {
  const inbox = join(dir, 'inbox');
  await mkdir(inbox, { recursive: true });
  const inInbox = join(inbox, name);
  await copyFile(file, inInbox);
  const args = ['--worker', delta ? 'delta' : 'plain', '--url', target.url, '--key', target.apiKey, '--file', inInbox, '--dir', dir, ...(options.memory ? ['--memory'] : [])];
  return runChild<DayResult>(options.worker, args, [...process.execArgv, ...options.nodeFlags], delta ? 'delta' : 'plain');
}

/** Bytes of every page of the delta state's tables and indexes (dbstat), over the keys remembered. */
function stateBytesPerKey(dir: string): { bytes: number; keys: number } {
  const db = new BetterSqlite3(join(dir, 'state', 'pricing-agent.db'), { readonly: true });
  try {
    const bytes = db.prepare(`SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name LIKE 'delta_keys%'`).pluck().get() as number;
    const keys = db.prepare(`SELECT count(*) FROM delta_keys`).pluck().get() as number;
    return { bytes, keys };
  } finally {
    db.close();
  }
}

const fmt = (n: number) => n.toLocaleString('en-US');

function line(label: string, r: DayResult): string {
  return (r.memory === undefined ? '' : `${label}: memory\n${r.memory}\n`) + `${label.padEnd(18)} ${fmt(r.requests).padStart(6)} requests ${fmt(r.rows).padStart(10)} rows ${(r.bytes / 1e6).toFixed(1).padStart(7)} MB sent  ${r.seconds.toFixed(2).padStart(6)} s  peak RSS ${r.peakRssMb.toFixed(0)} MB  (${fmt(r.unchanged)} unchanged)`;
}

/**
 * Day 2 is pushed `--repeat` times by each contender, one after the other against the one sandbox (plain, then delta,
 * three times by default): the first delta push continues day 1's state, the others start from copies of it. Medians
 * are compared. One run says little on a shared machine of two cores: day 2's delta push took 1.72-2.25 s and the plain
 * push 9.2-12.6 s in runs of one build (docs/performance.md), and the delta push's peak RSS moved by 10-30 MB between
 * runs, as much with a quarter of the keys as with all of them (the threads' V8 heaps grow differently from one run to
 * the next), so one run each could not say whether memory grows with the keys either. bench:smoke pushes day 2 twice,
 * the fewest that also take the push on a copy of the state.
 */
const DAY2_RUNS = 3;

interface Scenario {
  /** Day 2's delta pushes, the first one (on day 1's own state) first. */
  readonly deltas: DayResult[];
  /** Day 2's plain pushes (none for the smaller scenario). */
  readonly plains: DayResult[];
  /** The state after the first delta push of day 2. */
  readonly state: { bytes: number; keys: number };
}

/** Day 1 (the full export, by the delta agent: a source's first file is sent whole), then day 2 as asked. */
async function scenario(options: RunOptions, root: string, rows: number, plainToo: boolean, keep?: string): Promise<Scenario> {
  // The state after day 1 and the day-2 file, for the later runs of day 2 (and `--keep`).
  const saved = keep ?? join(root, `saved-${rows}`);
  const sandbox = await forkSandbox();
  try {
    const day1 = join(root, `day1-${rows}.csv`);
    const day2 = join(root, `day2-${rows}.csv`);
    await generate(day1, rows, 1, sandbox.stores);
    const total2 = await generate(day2, rows, 2, sandbox.stores);
    const agentDir = join(root, `agent-${rows}`);
    const first = await push(options, sandbox, day1, agentDir, 'day1.csv', true);
    console.log(line(`day 1 (${fmt(rows)})`, first));
    await cp(join(agentDir, 'state'), join(saved, 'state'), { recursive: true });
    await copyFile(day2, join(saved, 'day2.csv'));
    const deltas: DayResult[] = [];
    const plains: DayResult[] = [];
    let state: { bytes: number; keys: number } | null = null;
    for (let run = 1; run <= options.day2Runs; run += 1) {
      if (plainToo) {
        const plainDir = join(root, `plain-${rows}-${run}`);
        const plain = await push(options, sandbox, day2, plainDir, 'day2.csv', false);
        await rm(plainDir, { recursive: true, force: true });
        console.log(line(`day 2, plain #${run}`, plain));
        plains.push(plain);
      }
      const delta = run === 1 ? await push(options, sandbox, day2, agentDir, 'day2.csv', true) : await deltaOnCopy(options, saved, root, `${rows}-${run}`, sandbox);
      console.log(line(`day 2, delta #${run}`, delta));
      if (delta.sent + delta.unchanged !== total2) throw new Error(`day 2: ${delta.sent} sent + ${delta.unchanged} unchanged != ${total2} rows`);
      deltas.push(delta);
      state ??= stateBytesPerKey(agentDir);
    }
    return { deltas, plains, state: state as { bytes: number; keys: number } };
  } finally {
    await sandbox.stop();
    if (keep === undefined) await rm(saved, { recursive: true, force: true });
  }
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

async function orchestrate(rows: number, options: RunOptions, keep?: string): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'pa-bench-delta-'));
  try {
    console.log(`bench:delta  ${fmt(rows)} product_store rows; day 2: 1 % of the prices changed, 0.1 % new rows; batches of ${BATCH}, ${CONNECTIONS} connections`);
    const big = await scenario(options, root, rows, true, keep);
    const perKey = big.state.bytes / big.state.keys;
    console.log(`state: ${fmt(big.state.keys)} keys in ${(big.state.bytes / 1e6).toFixed(1)} MB on disk: ${perKey.toFixed(1)} bytes per key`);
    const quarter = Math.round(rows / 4);
    const small = await scenario(options, root, quarter, false);
    const runs = (values: number[], digits: number) => values.map((v) => v.toFixed(digits)).join(', ');
    const peaks = (s: Scenario) => s.deltas.map((d) => d.peakRssMb);
    const bigRss = median(peaks(big));
    const smallRss = median(peaks(small));
    const growth = ((bigRss - smallRss) / smallRss) * 100;
    console.log(
      `memory: delta day 2 peaks at ${smallRss.toFixed(0)} MB with ${fmt(quarter)} keys, ${bigRss.toFixed(0)} MB with ${fmt(rows)} (${growth >= 0 ? '+' : ''}${growth.toFixed(1)} %; ` +
        `medians of ${options.day2Runs} runs: ${runs(peaks(small), 0)} and ${runs(peaks(big), 0)} MB)`,
    );
    const rss = Math.max(bigRss, smallRss);
    const plainRss = median(big.plains.map((p) => p.peakRssMb));
    const vsPlain = ((rss - plainRss) / plainRss) * 100;
    console.log(`peak RSS: delta ${rss.toFixed(0)} MB, plain push ${plainRss.toFixed(0)} MB (${vsPlain >= 0 ? '+' : ''}${vsPlain.toFixed(1)} %; medians)`);
    const deltaSeconds = big.deltas.map((d) => d.seconds);
    const plainSeconds = big.plains.map((p) => p.seconds);
    const deltaTime = median(deltaSeconds);
    const plainTime = median(plainSeconds);
    console.log(`time: delta push ${runs(deltaSeconds, 2)} s, plain push ${runs(plainSeconds, 2)} s: medians ${deltaTime.toFixed(2)} and ${plainTime.toFixed(2)} s`);
    const delta = big.deltas[0] as DayResult;
    const plain = big.plains[0] as DayResult;
    const share = (a: number, b: number) => (a / b).toFixed(4);
    console.log(
      `bench:delta rows_sent_share=${share(delta.rows, plain.rows)} bytes_share=${share(delta.bytes, plain.bytes)} ` +
        `time_share=${share(deltaTime, plainTime)} agent_rss_mb=${Math.round(rss)} state_bytes_per_key=${perKey.toFixed(1)}`,
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/**
 * Day 2's delta push on a fresh copy of the state and the file saved in `saved` (scenario, `--keep`), against
 * `sandbox` (the scenario's, which holds day 2 already), or a fresh one (`--from`: it lacks day 1, so that the changed
 * rows are created, not updated).
 */
async function deltaOnCopy(options: RunOptions, saved: string, root: string, run: string, shared?: Target): Promise<DayResult> {
  const agentDir = join(root, `agent-${run}`);
  await cp(join(saved, 'state'), join(agentDir, 'state'), { recursive: true });
  // On disk before the push, as day 1 leaves it: else its first checkpoint's fsync writes the whole copy.
  const copy = await open(join(agentDir, 'state', 'pricing-agent.db'), 'r+');
  await copy.sync();
  await copy.close();
  const fresh = shared === undefined ? await forkSandbox() : null;
  try {
    return await push(options, shared ?? (fresh as Target), join(saved, 'day2.csv'), agentDir, 'day2.csv', true);
  } finally {
    await fresh?.stop();
    await rm(agentDir, { recursive: true, force: true });
  }
}

/** Day 2's delta push alone, `--repeat` times, on copies of the state and the file `--keep` saved in `from`. */
async function day2Only(from: string, options: RunOptions): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'pa-bench-delta-'));
  try {
    for (let i = 1; i <= options.day2Runs; i += 1) console.log(line(`day 2, delta #${i}`, await deltaOnCopy(options, from, root, String(i))));
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    keep: { type: 'string' },
    from: { type: 'string' },
    repeat: { type: 'string', default: String(DAY2_RUNS) },
    memory: { type: 'boolean', default: false },
    ...CHILD_OPTIONS,
  },
});

if (values.worker !== undefined) {
  const dir = values.dir ?? '';
  const target = { url: values.url ?? '', apiKey: values.key ?? '', stores: [] };
  const result = await pushWorker(target, values.file ?? '', join(dir, 'state'), join(dir, 'inbox'), values.worker === 'delta', values.memory);
  process.send?.(result);
  process.disconnect?.();
} else {
  const nodeFlags = values['node-flags'].split(' ').filter((f) => f !== '');
  const day2Runs = Number(values.repeat);
  if (!Number.isInteger(day2Runs) || day2Runs < 1) {
    process.stderr.write(`--repeat ${values.repeat}: give a whole number of 1 or more\n`);
    process.exit(2);
  }
  const compiled = await compileForBench();
  try {
    const options = { worker: compiled.path(import.meta.url), nodeFlags, memory: values.memory, day2Runs };
    if (values.from !== undefined) await day2Only(values.from, options);
    else await orchestrate(Number(values.rows), options, values.keep);
  } finally {
    await compiled.remove();
  }
}
