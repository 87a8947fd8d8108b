/**
 * `pricing-agent status` as a person or a monitoring script runs it: a child process reading a real state database
 * (files pushed to the sandbox over HTTP: one done, one failed, one deferred by a 401; approvals pulled; a POS
 * consumer), real inbox folders, a key check against the sandbox, and a loopback server standing in for the daemon's
 * /readyz.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectApi, type ApiConnection } from '../../src/api-from-config.ts';
import { systemClock } from '../../src/clock.ts';
import { loadConfig, type Config } from '../../src/config/index.ts';
import { ackConsumer } from '../../src/store/price-feed.ts';
import { runApprovedPricesPull } from '../../src/pull/approved-prices.ts';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.ts';
import { openStateDb } from '../../src/store/open-state-db.ts';
import type { StateDb } from '../../src/store/state-db.ts';
import type { StatusReport } from '../../src/status/status-report.ts';
import { refusedUrl } from '../support/scripted-server.ts';
import { runCli } from '../support/run-cli.ts';
import { captureLogger } from '../support/test-logger.ts';
import { cliFolder, fakeDaemon, pushConfigured } from './support.ts';

let dir: string;
let sandbox: SandboxHandle;
let readyz: { status: number; body: unknown } = { status: 200, body: { ready: true, state: 'running', reasons: [] } };
let daemon: { port: number; close(): Promise<void> };
let refusedPort: number;

async function writeConfig(name: string, stateDir: string, httpPort: number): Promise<string> {
  const file = join(dir, `${name}.yaml`);
  await writeFile(
    file,
    `api:\n  base_url: ${sandbox.url}\n  key_file: ./api-key\nstate:\n  dir: ${stateDir}\nhttp:\n  port: ${httpPort}\n` +
      `sources:\n  - { name: products, entity: products, path: ./inbox/products }\n` +
      `  - { name: tx, entity: transactions, path: ./inbox/tx, pattern: "*.txt", done_marker: .ok }\n`,
  );
  return file;
}

async function status(config: string, ...args: string[]): Promise<{ code: number; report: StatusReport; stderr: string }> {
  const run = await runCli(['status', '--json', '--config', config, ...args]);
  return { code: run.code, report: JSON.parse(run.stdout) as StatusReport, stderr: run.stderr };
}

beforeAll(async () => {
  sandbox = await startSandbox({ approvals: 60, stores: 3, largeGridRows: 0 });
  dir = await cliFolder('pa-status-', sandbox.apiKey);
  daemon = await fakeDaemon((req, res) => {
    res.writeHead(req.url === '/readyz' ? readyz.status : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(readyz.body));
  });
  refusedPort = Number(new URL(await refusedUrl()).port);
});

afterAll(async () => {
  await daemon.close();
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
});

describe('pricing-agent status', () => {
  it('before the first run: counts waiting files by the source rules, checks the key, exits 0 without a daemon', async () => {
    const inbox = join(dir, 'inbox', 'tx');
    for (const name of ['a.txt', 'b.txt', 'c.txt.part', '.d.txt', 'e.txt.ok', 'f.csv']) await writeFile(join(inbox, name), 'x\n');
    const { code, report } = await status(await writeConfig('fresh', join(dir, 'fresh-state'), refusedPort));
    expect(code).toBe(0);
    expect(report.database.state).toBe('missing');
    expect(report.sources.map((s) => [s.name, s.waiting, s.processing])).toEqual([['products', 0, 0], ['tx', 2, 0]]);
    expect(report.api_key).toMatchObject({ state: 'ok', user_id: sandbox.control.state().user_id });
    expect(report.daemon.state).toBe('not_running');
    expect(report.pull).toBeNull();
    for (const name of ['a.txt', 'b.txt', 'c.txt.part', '.d.txt', 'e.txt.ok', 'f.csv']) await rm(join(inbox, name));
  });

  describe('with a state database', () => {
    let config: Config;
    let configFile: string;
    let db: StateDb;
    let api: ApiConnection;
    const oldKey = () => sandbox.apiKey;

    const push = (sourceName: string, name: string, content: string) => pushConfigured({ config, db, client: api.client }, sourceName, name, content);

    beforeAll(async () => {
      configFile = await writeConfig('main', './state', daemon.port);
      config = await loadConfig(configFile, {}, {});
      db = await openStateDb(config.state);
      api = connectApi(config.api, captureLogger('info').logger);
      expect((await push('products', 'good.csv', 'item_id,sku,product_name\nP1,P1,Käse\nP2,P2,Brot\n')).outcome).toBe('done');
      expect((await push('products', 'broken.csv', 'item_id,sku\nP3,"P3\nP4,P4\n')).outcome).toBe('failed');
      await runApprovedPricesPull({ db, client: api.client, clock: systemClock, logger: captureLogger('info').logger });
      await ackConsumer(db, 'pos-1', 10);
      // The platform rotates the key: the next file is deferred (401), and the configured key no longer works.
      const previous = oldKey();
      sandbox.control.rotateKey();
      expect(sandbox.apiKey).not.toBe(previous);
      expect((await push('tx', 'sales.txt', 'transaction_id,item_id,transaction_timestamp\nT1,P1,2026-11-20T08:00:00Z\n')).outcome).toBe('deferred');
      await writeFile(join(config.sources[0]?.path ?? '', 'waiting.csv'), 'item_id,sku\nP9,P9\n');
    });

    afterAll(async () => {
      await api.close();
      await db.close();
    });

    it('shows files per source, the deferred file, the pull, the outbox and the consumer lag; exits 1 on the rejected key', async () => {
      readyz = { status: 200, body: { ready: true, state: 'running', reasons: [] } };
      const { code, report, stderr } = await status(configFile);
      expect(stderr).toBe('');
      expect(code).toBe(1);
      const products = report.sources.find((s) => s.name === 'products');
      expect(products).toMatchObject({ waiting: 1, processing: 0, done_today: 1, failed_today: 1, rows_accepted_today: 2 });
      expect(products?.last_file).toMatchObject({ name: 'broken.csv', status: 'failed' });
      const tx = report.sources.find((s) => s.name === 'tx');
      expect(tx).toMatchObject({ waiting: 0, processing: 1, deferred: 1, done_today: 0 });
      expect(tx?.next_retry_at).toEqual(expect.any(String));
      expect(report.processing_files).toEqual([expect.objectContaining({ source: 'tx', name: 'sales.txt', error_code: 'API_KEY_REJECTED' })]);
      const current = sandbox.control.world.approvals.all().filter((a) => a.cancelled_at === null && a.supersededBy === null).length;
      expect(report.pull).toMatchObject({ never_run: false, last_page: { status: 'done' }, rows_today: current });
      expect(report.pull?.approvals).toMatchObject({ total: current, acknowledged: current, ack_pending: 0 });
      expect(report.outbox).toMatchObject({ feed_rows: current, max_seq: current, consumers: [expect.objectContaining({ consumer: 'pos-1', lag: current - 10 })] });
      expect(report.api_key.state).toBe('rejected');
      expect(report.daemon).toMatchObject({ state: 'ready', url: `http://127.0.0.1:${daemon.port}/readyz` });
      expect(report.problems).toEqual([expect.stringMatching(/401/)]);
    });

    it('never prints the key, in text or JSON', async () => {
      const configured = (await readFile(join(dir, 'api-key'), 'utf8')).trim();
      const text = await runCli(['status', '--config', configFile]);
      const json = await runCli(['status', '--json', '--config', configFile]);
      for (const out of [text.stdout, text.stderr, json.stdout, json.stderr]) {
        expect(out).not.toContain(configured);
        expect(out).not.toContain(sandbox.apiKey);
      }
      expect(text.stdout).toMatch(/^API key\s+REJECTED: /m);
    });

    it('--offline skips the key; a daemon answering "not ready" exits 1 with its reasons, in aligned text', async () => {
      readyz = { status: 503, body: { ready: false, state: 'running', reasons: ['the inbox folder of source tx is missing'] } };
      const run = await runCli(['status', '--offline', '--config', configFile]);
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/^Daemon\s+NOT READY \(.*\): the inbox folder of source tx is missing$/m);
      expect(run.stdout).toMatch(/^API key\s+not checked \(--offline\)$/m);
      expect(run.stdout).toMatch(/^products\s+1\s+0\s+1\s+1\s+2\/0\s+#2 broken\.csv failed/m);
      expect(run.stdout).toMatch(/^tx\s+0\s+1 \(1 deferred\)/m);
      expect(run.stdout).toMatch(/^NOT OK: the daemon at .* is not ready/m);

      readyz = { status: 200, body: { ready: true, state: 'running', reasons: [] } };
      const ok = await status(configFile, '--offline');
      expect(ok.code).toBe(0);
      expect(ok.report.api_key.state).toBe('skipped');
    });
  });

  it('has --help with the exit codes, and exits 2 on a config mistake', async () => {
    const help = await runCli(['status', '--help']);
    expect(help.stdout).toMatch(/Exit codes:\n {2}0 {2}shown/);
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, 'api:\n  base_url: http://pricing.example.com\n  key: x\n');
    expect((await runCli(['status', '--config', bad])).code).toBe(2);
  });
});
