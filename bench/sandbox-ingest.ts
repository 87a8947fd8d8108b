/**
 * `npm run bench:sandbox`: bulk ingest of transactions into the sandbox over loopback, batches of 1000 rows on 4
 * connections, as the agent sends them. Prints rows/s and the sandbox's RSS. The sandbox must never be the agent's
 * bottleneck: the bar is 200,000 rows/s. Ends with one line:
 *
 *   bench:sandbox rows=<n> rows_per_s=<n> failed=<n> sandbox_rss_mb=<n>
 *
 *   node bench/sandbox-ingest.ts [--rows 1000000] [--batch 1000] [--connections 4]
 */
import { fork } from 'node:child_process';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    batch: { type: 'string', default: '1000' },
    connections: { type: 'string', default: '4' },
  },
});
const ROWS = Number(values.rows);
const BATCH = Number(values.batch);
const CONNECTIONS = Number(values.connections);
const WARMUP_BATCHES = 50;

interface Ready {
  url: string;
  apiKey: string;
  stores: string[];
}

const child = fork(new URL('./sandbox-server.ts', import.meta.url), { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const ready = await new Promise<Ready>((resolve, reject) => {
  child.once('message', (message) => resolve(message as Ready));
  child.once('exit', (code) => reject(new Error(`sandbox exited with ${String(code)}`)));
});
const pool = new Pool(ready.url, { connections: CONNECTIONS, pipelining: 1 });
const headers = { authorization: `Bearer ${ready.apiKey}`, 'content-type': 'application/json' };

const BATCH_DIGITS = 7;
const BATCH_MARK = 'B'.repeat(BATCH_DIGITS);

/**
 * One batch as the agent would send it: distinct transaction ids, a realistic field mix. The load generator must
 * not be the bottleneck (on a 2-core machine its CPU is taken from the sandbox's), so the body is built once as a
 * template; each connection sends its own copy, with the batch number written over at fixed offsets before each
 * request (no per-row work, no allocation: a new 250 kB body per request cost the client more in GC than the rest).
 */
function template(): { bytes: Buffer; offsets: number[] } {
  const rows: string[] = [];
  for (let i = 0; i < BATCH; i += 1) {
    const store = ready.stores[i % ready.stores.length]!;
    const quantity = (i % 5) + 1;
    rows.push(
      `{"transaction_id":"T${BATCH_MARK}-${i}","item_id":"ITM-${String(i % 5000).padStart(6, '0')}",` +
        `"transaction_timestamp":"2026-11-20T10:${String(i % 60).padStart(2, '0')}:12Z","product_id":"P-${i % 50}",` +
        `"store_id":"${store}","quantity":"${quantity}","price":"3.99","revenue":"${(quantity * 399) / 100}",` +
        `"currency":"EUR","is_promo":${i % 7 === 0}}`,
    );
  }
  const text = `{"items":[${rows.join(',')}]}`;
  const offsets: number[] = [];
  for (let at = text.indexOf(BATCH_MARK); at >= 0; at = text.indexOf(BATCH_MARK, at + 1)) offsets.push(at);
  return { bytes: Buffer.from(text, 'latin1'), offsets };
}

const TEMPLATE = template();

/** Writes batch number `batch` into `body` (a copy of the template), byte by byte. */
function number(body: Buffer, batch: number): Buffer {
  const digits = Buffer.from(String(batch).padStart(BATCH_DIGITS, '0'), 'latin1');
  for (const at of TEMPLATE.offsets) for (let i = 0; i < BATCH_DIGITS; i += 1) body[at + i] = digits[i]!;
  return body;
}

const REFUSED = Buffer.from('"ok":false', 'latin1');

/** Rows a bulk answer refused: occurrences of `"ok":false`, counted in the bytes. */
function refusedRows(answer: Buffer): number {
  let count = 0;
  for (let at = answer.indexOf(REFUSED); at >= 0; at = answer.indexOf(REFUSED, at + 1)) count += 1;
  return count;
}

async function send(first: number, count: number): Promise<number> {
  let next = first;
  let failed = 0;
  const worker = async (): Promise<void> => {
    // Free again once the answer is in: the sandbox answers only after reading the whole body.
    const body = Buffer.from(TEMPLATE.bytes);
    while (next < first + count) {
      const batch = next;
      next += 1;
      const res = await pool.request({ path: '/v1/transactions/bulk', method: 'POST', headers, body: number(body, batch) });
      const answer = Buffer.from(await res.body.arrayBuffer());
      if (res.statusCode !== 200) throw new Error(`bulk answered ${res.statusCode}: ${answer.toString('utf8', 0, 200)}`);
      failed += refusedRows(answer);
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  return failed;
}

interface Usage {
  cpuMs: number;
  rss: number;
  heapUsed: number;
  arrayBuffers: number;
}

function usage(): Promise<Usage> {
  return new Promise((resolve) => {
    child.once('message', (message) => resolve(message as Usage));
    child.send('usage');
  });
}

async function heldRows(): Promise<number> {
  const res = await pool.request({ path: '/_sandbox/state?keys=false', method: 'GET' });
  return ((await res.body.json()) as { transactions: { count: number } }).transactions.count;
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

try {
  await send(0, WARMUP_BATCHES);
  const before = await usage();
  const batches = Math.ceil(ROWS / BATCH);
  const started = performance.now();
  const clientCpu = process.cpuUsage();
  const failed = await send(WARMUP_BATCHES, batches);
  const seconds = (performance.now() - started) / 1000;
  const clientCpuSeconds = (process.cpuUsage(clientCpu).user + process.cpuUsage(clientCpu).system) / 1e6;
  const after = await usage();
  const rows = batches * BATCH;
  const cpuSeconds = (after.cpuMs - before.cpuMs) / 1000;
  console.log(`rows sent        ${rows} in ${seconds.toFixed(2)} s (${BATCH} per batch, ${CONNECTIONS} connections)`);
  console.log(`rows/s           ${Math.round(rows / seconds)}`);
  console.log(`failed rows      ${failed}`);
  console.log(`rows held        ${await heldRows()}`);
  console.log(`sandbox CPU      ${cpuSeconds.toFixed(2)} s = ${Math.round(rows / cpuSeconds)} rows per CPU-second (capacity on a free core)`);
  console.log(`client CPU       ${clientCpuSeconds.toFixed(2)} s (the load generator, on the other core)`);
  const held = after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers;
  console.log(`sandbox RSS      ${mb(before.rss)} -> ${mb(after.rss)} (heap used ${mb(after.heapUsed)}, array buffers ${mb(after.arrayBuffers)})`);
  console.log(`RSS per row      ~${Math.round((after.rss - before.rss) / rows)} bytes`);
  console.log(`held per row     ~${Math.round(held / rows)} bytes (heap used + array buffers after a full GC)`);
  console.log(`bench:sandbox rows=${rows} rows_per_s=${Math.round(rows / seconds)} failed=${failed} sandbox_rss_mb=${Math.round(after.rss / 1024 / 1024)}`);
} finally {
  await pool.close();
  child.disconnect();
}
