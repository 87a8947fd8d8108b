/**
 * `pricing-agent files list|show|retry` as a child process on a real ledger: files pushed to the sandbox over HTTP
 * (one done, one failed by a 403 the platform later lifts, one deferred by a 401 until the new key is in the key
 * file), and a loopback server standing in for a running daemon.
 */
import { readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectApi, type ApiConnection } from '../../src/api-from-config.ts';
import { loadConfig, type Config } from '../../src/config/index.ts';
import type { FileResult } from '../../src/ingest/file/push-file.ts';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.ts';
import type { FileDetail } from '../../src/status/file-list.ts';
import type { FileListItem } from '../../src/store/push-ledger-views.ts';
import { openStateDb } from '../../src/store/open-state-db.ts';
import type { StateDb } from '../../src/store/state-db.ts';
import { refusedUrl } from '../support/scripted-server.ts';
import { runCli } from '../support/run-cli.ts';
import { captureLogger } from '../support/test-logger.ts';
import { cliFolder, fakeDaemon, pushConfigured } from './support.ts';

let dir: string;
let sandbox: SandboxHandle;
let daemon: { port: number; close(): Promise<void> };
let config: Config;
let configFile: string;
/** The same, with a "daemon" answering on http.port. */
let daemonConfigFile: string;
let db: StateDb;
let api: ApiConnection;
const ids = { done: 0, failed: 0, deferred: 0 };

async function writeConfig(name: string, httpPort: number): Promise<string> {
  const file = join(dir, `${name}.yaml`);
  await writeFile(
    file,
    `api:\n  base_url: ${sandbox.url}\n  key_file: ./api-key\nstate:\n  dir: ./state\nhttp:\n  port: ${httpPort}\n` +
      `sources:\n  - { name: products, entity: products, path: ./inbox/products }\n  - { name: tx, entity: transactions, path: ./inbox/tx }\n`,
  );
  return file;
}

/** Pushes `name` from the source's inbox, writing `content` there first (null: it is there). */
function push(sourceName: string, name: string, content: string | null, client = api.client): Promise<FileResult> {
  return pushConfigured({ config, db, client }, sourceName, name, content);
}

function idOf(result: FileResult): number {
  if (!('file' in result)) throw new Error(result.outcome);
  return result.file.id;
}

const exists = (path: string) => stat(path).then(() => true, () => false);

beforeAll(async () => {
  sandbox = await startSandbox({ approvals: 0, largeGridRows: 0 });
  dir = await cliFolder('pa-files-', sandbox.apiKey);
  daemon = await fakeDaemon((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ready: true, state: 'running', reasons: [] }));
  });
  configFile = await writeConfig('no-daemon', Number(new URL(await refusedUrl()).port));
  daemonConfigFile = await writeConfig('daemon', daemon.port);
  config = await loadConfig(configFile, {}, {});
  db = await openStateDb(config.state);
  api = connectApi(config.api, captureLogger('info').logger);

  ids.done = idOf(await push('products', 'good.csv', 'item_id,sku\nP1,P1\nP2,P2\n'));
  sandbox.control.setDenied(['POST /v1/products/bulk']);
  const failed = await push('products', 'later.csv', 'item_id,sku\nP3,P3\nP4,"P4"\n');
  expect(failed.outcome).toBe('failed');
  ids.failed = idOf(failed);
  sandbox.control.setDenied([]);
  sandbox.control.rotateKey(); // the configured key stops working: the next file waits in processing/
  const deferred = await push('tx', 'sales.csv', 'transaction_id,item_id,transaction_timestamp\nT1,P1,2026-11-20T08:00:00Z\nT2,P2,2026-11-20T09:00:00Z\n');
  expect(deferred.outcome).toBe('deferred');
  ids.deferred = idOf(deferred);
});

afterAll(async () => {
  await api.close();
  await db.close();
  await daemon.close();
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
});

describe('pricing-agent files', () => {
  it('lists the newest first, filtered by status and source', async () => {
    const [all, filtered, text, nonsense] = await Promise.all([
      runCli(['files', 'list', '--json', '--config', configFile]),
      runCli(['files', 'list', '--json', '--status', 'processing', '--config', configFile]),
      runCli(['files', 'list', '--source', 'products', '--limit', '1', '--config', configFile]),
      runCli(['files', 'list', '--status', 'nonsense', '--config', configFile]),
    ]);
    expect(all.code).toBe(0);
    const items = JSON.parse(all.stdout) as FileListItem[];
    expect(items.map((f) => [f.id, f.name, f.status])).toEqual([
      [ids.deferred, 'sales.csv', 'claimed'],
      [ids.failed, 'later.csv', 'failed'],
      [ids.done, 'good.csv', 'done'],
    ]);
    const processing = JSON.parse(filtered.stdout) as FileListItem[];
    expect(processing.map((f) => f.id)).toEqual([ids.deferred]);
    expect(text.stdout.split('\n')[0]).toMatch(/^ID\s+SOURCE\s+STATUS\s+ROWS READ\/OK\/REJECTED\s+WHEN\s+FILE$/);
    expect(text.stdout).toMatch(new RegExp(`^\\s*${ids.failed}\\s+products\\s+failed \\(API_FORBIDDEN\\)\\s+.*later\\.csv$`, 'm'));
    expect(text.stdout).not.toContain('good.csv');
    expect(nonsense.code).toBe(2); // a usage mistake, like a config mistake (src/cli/main.ts)
    expect(nonsense.stderr).toMatch(/Allowed choices are .*processing/);
  });

  it('shows one file with its counts, place, report and error; an unknown id exits 1', async () => {
    const [run, text, missing] = await Promise.all([
      runCli(['files', 'show', String(ids.failed), '--json', '--config', configFile]),
      runCli(['files', 'show', String(ids.deferred), '--config', configFile]),
      runCli(['files', 'show', '999', '--config', configFile]),
    ]);
    expect(run.code).toBe(0);
    const detail = JSON.parse(run.stdout) as FileDetail;
    expect(detail.file).toMatchObject({ id: ids.failed, status: 'failed', error_code: 'API_FORBIDDEN' });
    expect(detail.location).toBe(join(dir, 'inbox', 'products', 'failed', 'later.csv'));
    expect(detail.report_path).toBe(`${detail.location ?? ''}.report.json`);
    expect(text.stdout).toMatch(/^Error\s+API_KEY_REJECTED: /m);
    expect(text.stdout).toMatch(new RegExp(`^Next try\\s+.*files retry ${ids.deferred}`, 'm'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no file with id 999/);
  });

  it('refuses to retry a done file and names push --force', async () => {
    const run = await runCli(['files', 'retry', String(ids.done), '--config', configFile]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/is done: nothing to retry.*pricing-agent push ".*good\.csv" --source products --force/);
  });

  it('moves a file done without a row accepted back into its inbox, like a failed one', async () => {
    const empty = await push('products', 'header-only.csv', 'item_id,sku\n');
    expect(empty.outcome).toBe('done');
    const run = await runCli(['files', 'retry', String(idOf(empty)), '--json', '--config', configFile]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ action: 'requeued', to: join(dir, 'inbox', 'products', 'header-only.csv') });
    await rm(join(dir, 'inbox', 'products', 'header-only.csv'));
  });

  it('moves a failed file back into its inbox, where it is claimed as new content (not a duplicate)', async () => {
    const failedPath = join(dir, 'inbox', 'products', 'failed', 'later.csv');
    const run = await runCli(['files', 'retry', String(ids.failed), '--json', '--config', daemonConfigFile]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ id: ids.failed, action: 'requeued', from: failedPath, to: join(dir, 'inbox', 'products', 'later.csv'), daemon: 'ready' });
    expect(await exists(failedPath)).toBe(false);
    // What the daemon's watcher would do with it now that the platform allows the request again:
    const current = connectApi({ ...config.api, key: sandbox.apiKey }, captureLogger('info').logger);
    const again = await push('products', 'later.csv', null, current.client).finally(() => current.close());
    expect(again.outcome).toBe('done');
    expect(sandbox.control.state({ keys: true }).products.keys).toEqual(expect.arrayContaining(['P3', 'P4']));
    const twice = await runCli(['files', 'retry', String(ids.failed), '--config', configFile]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/no longer at/);
  });

  it('leaves a deferred file to a running daemon, and otherwise pushes it now with the new key', async () => {
    const refused = await runCli(['files', 'retry', String(ids.deferred), '--config', daemonConfigFile]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/a daemon answers on http:\/\/127\.0\.0\.1:\d+\/readyz: it owns the files in processing\/.*restart it/);
    expect(await readdir(join(dir, 'inbox', 'tx', 'processing'))).toHaveLength(1);

    await writeFile(join(dir, 'api-key'), `${sandbox.apiKey}\n`, { mode: 0o600 }); // the rotated key, as a person would
    const run = await runCli(['files', 'retry', String(ids.deferred), '--json', '--config', configFile]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ id: ids.deferred, action: 'resumed', outcome: 'done', rows_accepted: 2, rows_rejected: 0 });
    expect(sandbox.control.state({ keys: true }).transactions.keys).toEqual(expect.arrayContaining(['T1', 'T2']));
    expect(await readdir(join(dir, 'inbox', 'tx', 'processing'))).toEqual([]);
  });
});
