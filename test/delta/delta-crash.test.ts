/**
 * Crash safety of delta push, with real processes: `pricing-agent push FILE --source S` (a product_store source, delta
 * by default) runs as a child process against a sandbox in the test process. Day 1 is sent whole; day 2 (a tenth of
 * the prices changed, a hundredth new keys) is SIGKILLed while it is compared, then after two numbers of committed
 * batches drawn from a seeded generator (PA_DELTA_CRASH_SEED), and finished by running the same command again. Twice:
 * a small file, compared by content on one thread, and a file of 350,000 rows (over 16 MiB), compared in two halves in
 * line mode (src/ingest/delta/compare.ts), which the agent's debug log must not show giving way. The large file is a
 * long run: `npm run test:crash` runs it, `npm test` the small one.
 *
 * In the end: every changed and new row is on the platform with its day-2 price (no changed row lost); no unchanged row
 * was written again (each keeps the write sequence number day 1 gave it); the rows written beyond the changed ones are
 * at most the batches in flight at each kill; the report counts each row once.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BULK_BATCH_MAX } from '../../src/api/schemas/limits.ts';
import { Prng } from '../../src/sandbox/prng.ts';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.ts';
import { writeAgentConfig } from '../fixtures/push/push-fixtures.ts';
import { expectReconciled, readReport } from '../fixtures/push/push-report.ts';
import { crashFull } from '../support/crash-size.ts';
import { ledger, startAgent, waitForLedger } from '../support/push-child.ts';

const CONNECTIONS = 4;
const SEED = Number(process.env['PA_DELTA_CRASH_SEED'] ?? 13);

let sandbox: SandboxHandle;
beforeAll(async () => {
  sandbox = await startSandbox({ approvals: 0, largeGridRows: 0 });
});
afterAll(() => sandbox.close());

/** Day 1: `keys` keys; day 2: every tenth price changed and keys / 100 new keys. Prices are decimal strings. */
function day(n: 1 | 2, stores: readonly string[], keys: number): Map<string, { item: string; store: string; price: string }> {
  // Each case has items of its own (DX<keys>-i): the sandbox is shared.
  const rows = new Map<string, { item: string; store: string; price: string }>();
  const count = n === 1 ? keys : keys + keys / 100;
  for (let i = 0; i < count; i += 1) {
    const cents = 100 + (i % 900) + (n === 2 && i % 10 === 3 ? 7 : 0);
    const row = { item: `DX${keys}-${i}`, store: stores[i % stores.length] ?? '', price: `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}` };
    rows.set(`${row.item}|${row.store}`, row);
  }
  return rows;
}

async function writeDay(path: string, rows: Map<string, { item: string; store: string; price: string }>): Promise<void> {
  await writeFile(path, `item_id,store_id,current_price\n${[...rows.values()].map((r) => `${r.item},${r.store},${r.price}`).join('\n')}\n`);
}

/** The sandbox's rows of a case's items (day): price and write sequence number by key. */
function platform(keys: number): Map<string, { price: string; seq: number }> {
  const rows = new Map<string, { price: string; seq: number }>();
  for (const row of sandbox.control.world.productStore.table.rows()) {
    if (row.item_id.startsWith(`DX${keys}-`)) rows.set(`${row.item_id}|${row.store_id ?? ''}`, { price: row.current_price, seq: row.seq });
  }
  return rows;
}

function maxSeq(rows: Map<string, { seq: number }>): number {
  let max = 0;
  for (const r of rows.values()) max = Math.max(max, r.seq);
  return max;
}

const CASES = [
  { mode: 'by content on one thread', rows: 4000, batch: 20, lineMode: false },
  // Line mode needs a file over 16 MiB (MIN_SPLIT_BYTES): a long run, under `npm run test:crash` only.
  ...(crashFull ? [{ mode: 'in two halves, in line mode', rows: 350_000, batch: 500, lineMode: true }] : []),
] as const;

it.each(CASES)(`delta push compared $mode, killed while comparing and at seeded batch counts (seed ${SEED}): no changed row lost, no unchanged row sent again`, { timeout: 180_000 }, async ({ rows: ROWS, batch: BATCH, lineMode: LINE_MODE }) => {
  const dir = await mkdtemp(join(tmpdir(), 'pa-delta-crash-'));
  const inbox = join(dir, 'inbox');
  await mkdir(inbox, { recursive: true });
  // Day 1 only fills the platform and the agent's remembered rows, in the largest batches the API takes; the batch size
  // is no part of a source's fingerprint (src/ingest/delta/fingerprint.ts), so day 2 is compared with the same state.
  const writeConfig = (batchSize: number) =>
    writeAgentConfig(dir, sandbox.url, [{ name: 'erp', entity: 'product_store', path: './inbox', batch_size: batchSize }], {
      api: { base_url: sandbox.url, key: '${PRICING_API_KEY}', max_connections: CONNECTIONS },
      log: { level: 'debug' },
    });
  const config = await writeConfig(BULK_BATCH_MAX);
  const dbPath = join(dir, 'state', 'pricing-agent.db');
  const stores = sandbox.control.state().stores;
  const push = (file: string) => ['push', file, '--source', 'erp', '--config', config, '--json'];

  const day1 = day(1, stores, ROWS);
  await writeDay(join(inbox, 'day1.csv'), day1);
  const first = await startAgent(push(join(inbox, 'day1.csv')), sandbox.apiKey).exited;
  expect(first.code, first.stderr).toBe(0);
  const before = platform(ROWS);
  expect(before.size).toBe(ROWS);
  await writeConfig(BATCH);

  const day2 = day(2, stores, ROWS);
  const toSend = [...day2.entries()].filter(([key, row]) => before.get(key)?.price !== row.price);
  expect(toSend).toHaveLength(ROWS / 10 + ROWS / 100);
  const file = join(inbox, 'day2.csv');
  await writeDay(file, day2);

  // Kill points: while the file is compared (claimed, nothing committed), then after k1 and k2 committed batches.
  const prng = new Prng(SEED, 1);
  const batches = Math.ceil(toSend.length / BATCH);
  const k1 = prng.int(1, Math.floor(batches / 2));
  const k2 = prng.int(k1 + 1, batches - 2);
  const kills: number[] = [];
  for (const target of [0, k1, k2]) {
    const agent = startAgent(push(file), sandbox.apiKey);
    const what = target === 0 ? 'the claim of day 2' : `${target} committed batches of day 2`;
    await waitForLedger(agent, dbPath, what, (l) => l.started && l.status !== 'done' && l.batches >= target);
    await agent.kill();
    kills.push(ledger(dbPath).batches);
  }
  expect(ledger(dbPath).status, `killed at ${kills.join(', ')} batches`).not.toBe('done');

  const last = await startAgent(push(file), sandbox.apiKey).exited;
  expect(last.code, last.stderr).toBe(0);
  // Compared as the case says (the agent's debug log), after the kills as before them.
  expect(last.stderr.includes('compared line by line'), last.stderr.slice(-2000)).toBe(LINE_MODE);
  expect(last.stderr.includes('compared by content'), last.stderr.slice(-2000)).toBe(false);
  const out = JSON.parse(last.stdout) as { report: string; rows: Record<string, number> };
  expect(out.rows).toMatchObject({ read: day2.size, sent: toSend.length, accepted: toSend.length, unchanged: day2.size - toSend.length, rejected: 0, superseded: 0 });
  expectReconciled((await readReport(out.report)).rows);

  const after = platform(ROWS);
  expect(after.size).toBe(day2.size);
  const wrong = [...day2.entries()].filter(([key, row]) => after.get(key)?.price !== row.price).map(([key]) => key);
  expect(wrong, 'every changed and new row has its day-2 price').toEqual([]);
  const rewritten = [...before.entries()].filter(([key, row]) => day2.get(key)?.price === row.price && after.get(key)?.seq !== row.seq).map(([key]) => key);
  expect(rewritten, 'no unchanged row was written again').toEqual([]);
  // Rows written on day 2: the changed and new ones, and again at most those of the batches in flight at each kill.
  const writes = maxSeq(after) - maxSeq(before);
  expect(writes).toBeGreaterThanOrEqual(toSend.length);
  expect(writes, `killed at ${kills.join(', ')} batches`).toBeLessThanOrEqual(toSend.length + kills.length * CONNECTIONS * BATCH);
});
