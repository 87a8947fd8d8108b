/**
 * The pull, outbox, exports and jobs commands as a person runs them: child processes against the sandbox, a config
 * file in a temp dir, stdout checked readable and as JSON.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.ts';
import { runCli } from '../support/run-cli.ts';

let sandbox: SandboxHandle;
let dir: string;
let config: string;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandbox({ approvals: 700, largeGridRows: 0 });
  dir = await mkdtemp(join(tmpdir(), 'pa-pull-cli-'));
  config = join(dir, 'pricing-agent.yaml');
  await writeFile(
    config,
    `api:\n  base_url: ${sandbox.url}\n  key: \${PRICING_API_KEY}\nstate:\n  dir: ./state\nlog:\n  level: warn\n` +
      `outbox:\n  exports:\n    dir: ./outbox\n    format: jsonl\n`,
  );
  env = { PRICING_API_KEY: sandbox.apiKey };
});
afterAll(async () => {
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
});

const cli = (...args: string[]) => runCli([...args, '--config', config], env);

// Each command is a node process (about 0.7 s of CPU to start); other suites share the two cores.
describe('pricing-agent pull, outbox, exports, jobs', { timeout: 90_000 }, () => {
  it('--history prints JSON Lines and changes nothing on the platform or in the outbox', async () => {
    const before = sandbox.control.state().approvals;
    const run = await cli('pull', '--history', '--since', '2000-01-01');
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: number });
    expect(lines).toHaveLength(before.total);
    expect(new Set(lines.map((l) => l.id)).size).toBe(before.total);
    expect(run.stderr).toMatch(new RegExp(`^${before.total} approved-price versions approved since 2000-01-01T00:00:00Z`, 'm'));
    expect(sandbox.control.state().approvals).toEqual(before);
    expect(existsSync(join(dir, 'state'))).toBe(false);
  });

  it('pull --once stores, acknowledges and writes store files; outbox stats, ack and consumers show it', async () => {
    const run = await cli('pull', '--once', '--json');
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as { deliveries: { inserted: number }; acks: { acknowledged: number }; files: unknown[] };
    const acked = sandbox.control.state().approvals.acks.filter((a) => a.ack_count === 1).length;
    expect(summary.acks.acknowledged).toBe(acked);
    expect(summary.deliveries.inserted).toBe(acked);
    expect(summary.files.length).toBeGreaterThan(0);
    expect((await readdir(join(dir, 'outbox'))).length).toBe(summary.files.length);

    const readable = await cli('pull');
    expect(readable.code, readable.stderr).toBe(0);
    expect(readable.stdout).toMatch(/^deliveries: +1 page\(s\), 0 approvals, 0 new, 0 feed rows$/m);

    const [stats, exported, elsewhere, otherFormat] = await Promise.all([
      cli('outbox', 'stats', '--json'),
      cli('outbox', 'export', '--dir', join(dir, 'outbox')), // the configured folder itself: fine
      cli('outbox', 'export', '--dir', join(dir, 'elsewhere')),
      cli('outbox', 'export', '--format', 'csv'),
    ]);
    expect(exported.stdout).toBe(`0 file(s), 0 rows, in ${join(dir, 'outbox')}\n`);
    // Each feed row goes into one file only: files elsewhere, or in another format, would take rows from the tills' folder.
    expect([elsewhere.code, otherFormat.code]).toEqual([2, 2]);
    expect(elsewhere.stderr).toContain(`outbox.exports writes jsonl files to ${join(dir, 'outbox')}, and each feed row goes into one file only`);
    expect(otherFormat.stderr).toMatch(/files in csv would take their rows away from there; leave out --dir and --format/);
    expect(existsSync(join(dir, 'elsewhere'))).toBe(false);
    expect(JSON.parse(stats.stdout)).toMatchObject({ feed_rows: acked, approvals: { acknowledged: acked, ack_pending: 0 } });
    const ack = await cli('outbox', 'ack', '--consumer', 'pos-store-0042', '--seq', '10');
    expect(ack.code, ack.stderr).toBe(0);
    expect(ack.stdout).toBe(`pos-store-0042 is at seq 10 (${acked - 10} rows behind)\n`);
    const backwards = await cli('outbox', 'ack', '--consumer', 'pos-store-0042', '--seq', '5');
    expect(backwards.code).toBe(2); // a usage mistake (--force is the way): nothing recorded
    expect(backwards.stderr).toMatch(/--force/);
    const consumers = await cli('outbox', 'consumers', '--json');
    expect(JSON.parse(consumers.stdout)).toMatchObject({ name: 'pos-store-0042', offset: 10, unread_rows: acked - 10, stores: [] });
  });

  it('pull --reconcile withdraws a price cancelled after acknowledgement; pull --stream mirrors', async () => {
    const acked = sandbox.control.state().approvals.acks.find((a) => a.ack_count === 1);
    if (!acked) throw new Error('run the pull test first');
    sandbox.control.cancel(acked.id);
    const run = await cli('pull', '--reconcile', '--json');
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ withdrawals: 1, cancelledSeen: expect.any(Number) as number });

    const grid = sandbox.control.world.grids.grids[2];
    const stream = await cli('pull', '--stream', `grid:${grid?.grid_id ?? ''}`);
    expect(stream.code, stream.stderr).toBe(0);
    expect(stream.stdout).toMatch(new RegExp(`^grid:${grid?.grid_id ?? ''}: 40 rows in 1 page\\(s\\), updated_after -, watermark now 20`));
    // Usage mistakes exit 2 (as docs/exit-codes.md says; they exited 1); a stream that fails exits 1 (it exited 0).
    const [wrong, full, missingGrid] = await Promise.all([cli('pull', '--stream', 'prices'), cli('pull', '--full'), cli('pull', '--stream', 'grid:no-such-grid')]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/unknown stream prices/);
    expect(full.code).toBe(2);
    expect(full.stderr).toMatch(/--full needs --stream/);
    expect(missingGrid.code, missingGrid.stdout).toBe(1);
    expect(missingGrid.stdout).toMatch(/^grid:no-such-grid: FAILED: /);
  });

  it('exports cancel and jobs show print the status objects readable and as JSON', async () => {
    const queued = sandbox.control.addExport('queued');
    const cancel = await cli('exports', 'cancel', queued.export_id);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(cancel.stdout).toMatch(new RegExp(`^export_id: +${queued.export_id}\\nstatus: +cancelled\\n|status: +cancelled`, 'm'));
    const again = await cli('exports', 'cancel', queued.export_id, '--json');
    expect(JSON.parse(again.stdout)).toMatchObject({ export_id: queued.export_id, status: 'cancelled' });

    const csv = join(dir, 'products.csv');
    await writeFile(csv, 'item_id,sku,product_name\nA-1,A-1,Apple\n');
    const dispatcher = new Agent({ allowH2: false });
    const client = new ApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey, dispatcher });
    const { job_id: jobId } = await client.products.import(csv);
    await dispatcher.close();
    const [show, json, bad] = await Promise.all([
      cli('jobs', 'show', jobId),
      cli('jobs', 'show', jobId, '--json'),
      cli('jobs', 'show', 'not-a-uuid'),
    ]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(new RegExp(`^job_id: +${jobId}$`, 'm'));
    expect(show.stdout).toMatch(/^status: +(queued|running|completed)$/m);
    expect(JSON.parse(json.stdout)).toMatchObject({ job_id: jobId });
    // Checked before anything is sent: a usage mistake (it exited 1, naming the internal operation jobs.get).
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: command-argument value 'not-a-uuid' is invalid for argument 'job_id'\. expected a UUID/);
  });
});
