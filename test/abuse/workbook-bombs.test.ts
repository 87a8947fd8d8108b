/**
 * Issue 27 point 4: one dropped workbook must not crash the agent. A 4.5 MB .xlsx of 110 million tiny shared strings
 * (1.7 GB unpacked) exhausted the heap after minutes, and the file, left in processing/, crashed the agent again at
 * every start. `pricing-agent push` (a child process, its heap capped so that a table held whole cannot fit) reads
 * workbooks over each of `workbook_limits` (src/ingest/read/xlsx-limits.ts): each fails with WORKBOOK_TOO_LARGE and a
 * sentence naming its limit, and goes to failed/ with that error in its report, nothing sent. The bomb runs at a few million
 * strings here and at the original 110 million under `npm run test:abuse`.
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.ts';
import { writeAgentConfig } from '../fixtures/push/push-fixtures.ts';
import { bigWorkbook, withSharedStrings, workbook } from '../ingest/support/workbooks.ts';
import { abuseFull, abuseSize } from '../support/abuse.ts';
import { runCli } from '../support/run-cli.ts';

vi.setConfig({ testTimeout: abuseFull ? 900_000 : 60_000 });

let sandbox: SandboxHandle;
let dir: string;
beforeAll(async () => {
  sandbox = await startSandbox({ approvals: 0, largeGridRows: 0 });
  dir = await mkdtemp(join(tmpdir(), 'pa-abuse-xlsx-'));
});
afterAll(async () => {
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
});

/** A small, genuine price workbook: the base every bomb is built on. */
async function prices(where: string): Promise<string> {
  const [s1] = sandbox.control.state().stores;
  return workbook(where, 'base.xlsx', [{ name: 'Preise', rows: [['item_id', 'store_id', 'current_price'], ['WB-1', s1, 1.5], ['WB-2', s1, 2.5]] }]);
}

/**
 * Pushes `make(inbox)`'s workbook from a `format: xlsx` source with these `workbook_limits`; returns the CLI's run
 * and the file's error (null unless it went to failed/, its report saying the same).
 */
async function push(name: string, limits: Record<string, number>, make: (inbox: string) => Promise<string>, heapMb = 192) {
  const root = join(dir, name);
  const inbox = join(root, 'inbox');
  await mkdir(inbox, { recursive: true });
  const config = await writeAgentConfig(root, sandbox.url, [
    { name: 'wb', entity: 'product_store', path: './inbox', format: 'xlsx', ...(Object.keys(limits).length > 0 ? { workbook_limits: limits } : {}) },
  ]);
  const file = await make(inbox);
  const requests = sandbox.control.state().requests.total;
  // 192 MB of heap: the agent reading a workbook needs far less; a table of millions of strings does not fit.
  // (A table at the default max_shared_strings, 5 million, needs more: the full run of that test gives 1 GB.)
  const run = await runCli(['push', file, '--source', 'wb', '--config', config, '--json'], {
    PRICING_API_KEY: sandbox.apiKey,
    NODE_OPTIONS: `--max-old-space-size=${heapMb}`,
  });
  const outcome = JSON.parse(run.stdout || 'null') as { outcome: string; final_path: string; report: string; error: { code: string; message: string } | null } | null;
  const report = outcome === null ? null : (JSON.parse(await readFile(outcome.report, 'utf8')) as { error: unknown });
  const error = outcome?.outcome === 'failed' && outcome.final_path === join(inbox, 'failed', basename(file)) ? outcome.error : null;
  expect(report?.error).toEqual(error);
  return { run, error, sent: sandbox.control.state().requests.total - requests };
}

function expectTooLarge(result: Awaited<ReturnType<typeof push>>, limit: string): void {
  expect(result.run.stderr).not.toMatch(/heap|FATAL| {4}at /);
  expect(result.error, result.run.stdout + result.run.stderr).toMatchObject({ code: 'WORKBOOK_TOO_LARGE' });
  expect(result.error?.message).toMatch(new RegExp(`^the workbook is too large to read safely: .*, over workbook_limits\\.${limit} \\(\\d+\\); split it`));
  expect(result.sent).toBe(0);
}

describe('workbooks over their limits fail on their own, before the memory is spent', () => {
  // Half a million strings (8.5 MB unpacked) fail on the ratio as they are inflated; the original 110 million
  // (1.87 GB) already on the size the archive's directory declares, before a byte is inflated.
  const [bombStrings, bombLimit, bombWhy] = abuseSize(
    [500_000, 'max_compression_ratio', 'its part xl/sharedStrings.xml unpacks to more than 100 times'],
    [110_000_000, 'max_unpacked_bytes', 'its part xl/sharedStrings.xml unpacks to 1870000327 bytes'],
  );
  it(`a zip bomb of ${bombStrings} one-letter shared strings fails on ${bombLimit}`, async () => {
    const result = await push('bomb', {}, async (inbox) => withSharedStrings(await prices(dir), join(inbox, 'bomb.xlsx'), bombStrings, () => 'a'));
    expectTooLarge(result, bombLimit);
    expect(result.error?.message).toContain(bombWhy);
  });

  it(`${abuseSize('20 thousand', 'six million')} distinct shared strings fail on max_shared_strings`, async () => {
    const [count, limits, heapMb] = abuseSize([20_000, { max_shared_strings: 10_000 }, 192], [6_000_000, { max_compression_ratio: 1_000_000 }, 1024]);
    const result = await push('strings', limits, async (inbox) => withSharedStrings(await prices(dir), join(inbox, 'strings.xlsx'), count, (i) => `S${i}`), heapMb);
    expectTooLarge(result, 'max_shared_strings');
  });

  it('the shared strings table over max_shared_strings_bytes', async () => {
    const result = await push('table-bytes', { max_shared_strings_bytes: 50_000 }, async (inbox) =>
      withSharedStrings(await prices(dir), join(inbox, 'table.xlsx'), 10_000, (i) => `Artikel ${i}`),
    );
    expectTooLarge(result, 'max_shared_strings_bytes');
  });

  it('a sheet that unpacks to more than max_unpacked_bytes', async () => {
    const result = await push('unpacked', { max_unpacked_bytes: 200_000 }, (inbox) =>
      bigWorkbook(join(inbox, 'big.xlsx'), ['item_id', 'store_id', 'current_price'], 5_000, (i) => [`WB-${i}`, 'S1', 1]),
    );
    expectTooLarge(result, 'max_unpacked_bytes');
  });

  it('a sheet with more cells than max_cells', async () => {
    const result = await push('cells', { max_cells: 1_000 }, (inbox) =>
      bigWorkbook(join(inbox, 'cells.xlsx'), ['item_id', 'store_id', 'current_price'], 400, (i) => [`WB-${i}`, 'S1', 1]),
    );
    expectTooLarge(result, 'max_cells');
  });
});
