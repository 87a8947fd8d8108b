/**
 * Upgrades with a way back, as a person runs them (child processes, a config file, the sandbox): the state of the
 * previous release (the commit before migration 0018, built from git in the test) is upgraded by this build, which
 * first takes a backup and names it; the old build then refuses the state; `state restore` of that backup lets the
 * old build run on it again with its rows. Also: `state backup` while the state is in use, the bounded automatic
 * backups, and what `state restore` and a start refuse (a running agent, a file that is not a state, a state
 * written by a newer agent).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.ts';
import { automaticBackup } from '../../src/store/sqlite/backup.ts';
import { AUTOMATIC_BACKUPS_KEPT } from '../../src/store/upgrade-safety.ts';
import { databasePath, openSqlite } from '../../src/store/sqlite/open-sqlite.ts';
import { writeAgentConfig } from '../fixtures/push/push-fixtures.ts';
import { previousRelease } from '../support/previous-release.ts';
import { runCli, type CliRun } from '../support/run-cli.ts';
import { tempDir } from '../store/support.ts';


let sandbox: SandboxHandle;
let old: ReturnType<typeof previousRelease>;
let daemon: Server | null = null;

beforeAll(async () => {
  sandbox = await startSandbox({ approvals: 0, largeGridRows: 0 });
  old = previousRelease(tempDir());
});

afterAll(async () => {
  await sandbox.close();
  await new Promise<void>((done) => (daemon ? daemon.close(() => done()) : done()));
});

function runOld(args: string[]): Promise<CliRun> {
  return old(args, { PRICING_API_KEY: sandbox.apiKey });
}

function cli(args: string[]): Promise<CliRun> {
  return runCli(args, { PRICING_API_KEY: sandbox.apiKey });
}

async function site(dir: string, httpPort = 1): Promise<string> {
  await mkdir(join(dir, 'inbox', 'erp'), { recursive: true });
  return writeAgentConfig(dir, sandbox.url, [{ name: 'erp', entity: 'product_store', path: './inbox/erp' }], { http: { port: httpPort } });
}

async function csvFile(dir: string, name: string, changed: string): Promise<string> {
  const [s1, s2] = sandbox.control.state().stores;
  const rows = Array.from({ length: 20 }, (_, i) => `M-${i},${i % 2 === 0 ? s1 : s2},${i === 7 ? changed : `1.${String(i).padStart(2, '0')}`}`);
  const file = join(dir, name);
  await writeFile(file, `item_id,store_id,current_price\n${rows.join('\n')}\n`);
  return file;
}

function push(file: string, config: string, run: (args: string[]) => Promise<CliRun> = cli) {
  return run(['push', file, '--source', 'erp', '--json', '-c', config]);
}

const sentRows = (run: CliRun) => (JSON.parse(run.stdout) as { rows: Record<string, number> }).rows;

describe('upgrading the previous release and rolling back', () => {
  it('head backs the old state up before it migrates it; restored, the old build runs on it with its rows', async () => {
    const dir = tempDir();
    const config = await site(dir);
    const first = await push(await csvFile(dir, 'first.csv', '1.07'), config, runOld);
    expect(first.code, first.stderr).toBe(0);

    const upgraded = await push(await csvFile(dir, 'second.csv', '1.17'), config);
    expect(upgraded.code, upgraded.stderr).toBe(0);
    expect(sentRows(upgraded)).toMatchObject({ sent: 1, unchanged: 19 });
    const named = /the state is upgraded: a backup of it was written to (\S+)/.exec(upgraded.stderr);
    expect(named, upgraded.stderr).not.toBeNull();
    const backup = named?.[1] ?? '';
    expect(backup).toMatch(new RegExp(`^${join(dir, 'state', 'backups')}/pricing-agent-pre-upgrade-0\\.1\\.0-\\d{8}T\\d{6}Z\\.db$`));
    expect(statSync(backup).mode & 0o777).toBe(0o600);

    // The old build cannot use the migrated state.
    const refused = await push(await csvFile(dir, 'third.csv', '1.27'), config, runOld);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('corrupted migrations');

    const restored = await cli(['state', 'restore', backup, '-c', config]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toContain(`restored ${backup} to ${databasePath(join(dir, 'state'))}`);
    expect(statSync(databasePath(join(dir, 'state'))).mode & 0o777).toBe(0o640); // the state's own mode, not the backup's
    // The state it replaced (the upgraded one, with the second push) is kept, and named: nothing of it is lost.
    const kept = /The state it replaced is kept in (\S+) /.exec(restored.stdout)?.[1] ?? '';
    expect(kept).toMatch(new RegExp(`^${join(dir, 'state', 'backups')}/pricing-agent-0\\.1\\.0-\\d{8}T\\d{6}Z-replaced\\.db$`));
    const replaced = new BetterSqlite3(kept, { readonly: true });
    expect(replaced.prepare('SELECT count(*) AS n FROM push_files').get()).toEqual({ n: 2 });
    replaced.close();
    // The old build runs again, on the state as it was before the upgrade: its first push's keys are there, so
    // only the row that differs from the first file is sent.
    const again = await push(join(dir, 'third.csv'), config, runOld);
    expect(again.code, again.stderr).toBe(0);
    expect(sentRows(again)).toMatchObject({ sent: 1, unchanged: 19 });
  }, 60_000);
});

describe('state written by a newer agent', () => {
  it('a start refuses with one sentence naming the version and the restore command; restore refuses that state', async () => {
    const dir = tempDir();
    const config = await site(dir);
    const stateDir = join(dir, 'state');
    await (await openSqlite(databasePath(stateDir))).close();
    const before = await automaticBackup(databasePath(stateDir), new Date('2026-11-28T10:00:00Z'));
    const sqlite = new BetterSqlite3(databasePath(stateDir));
    sqlite.prepare(`INSERT INTO kysely_migration (name, timestamp) VALUES ('9999-future', '2026-11-28T11:00:00Z')`).run();
    sqlite.prepare(`INSERT INTO agent_meta (key, value) VALUES ('written_by_version', '9.9.9') ON CONFLICT (key) DO UPDATE SET value = excluded.value`).run();
    sqlite.close();

    const start = await push(await csvFile(dir, 'a.csv', '1.07'), config);
    expect(start.code).toBe(1);
    const lines = start.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('was upgraded by pricing-agent 9.9.9 (migrations 9999-future are unknown to this pricing-agent 0.1.0)');
    expect(lines[0]).toContain(`pricing-agent state restore ${before}`);

    const copy = join(dir, 'newer.db');
    const saved = await cli(['state', 'backup', '--to', copy, '-c', config]);
    expect(saved.code, saved.stderr).toBe(0);
    const refused = await cli(['state', 'restore', copy, '-c', config]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('was upgraded by pricing-agent 9.9.9');
  });
});

describe('pricing-agent state backup and restore', () => {
  it('backs up the state while a connection writes to it; the copy is a state with the rows, 0600', async () => {
    const dir = tempDir();
    const config = await site(dir);
    const pushed = await push(await csvFile(dir, 'a.csv', '1.07'), config);
    expect(pushed.code, pushed.stderr).toBe(0);
    const writer = new BetterSqlite3(databasePath(join(dir, 'state')));
    writer.exec('BEGIN IMMEDIATE'); // a write under way: the backup copies the last committed state
    writer.prepare(`INSERT INTO agent_meta (key, value) VALUES ('uncommitted', 'x')`).run();
    const run = await cli(['state', 'backup', '-c', config]);
    writer.exec('ROLLBACK');
    writer.close();
    expect(run.code, run.stderr).toBe(0);
    const file = /backup written to (\S+)/.exec(run.stdout)?.[1] ?? '';
    expect(file).toMatch(/\/state\/backups\/pricing-agent-0\.1\.0-\d{8}T\d{6}Z\.db$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const copy = new BetterSqlite3(file, { readonly: true });
    expect(copy.prepare('SELECT count(*) AS n FROM delta_keys').get()).toEqual({ n: 20 });
    expect(copy.prepare(`SELECT count(*) AS n FROM agent_meta WHERE key = 'uncommitted'`).get()).toEqual({ n: 0 });
    copy.close();

    // --to where a file already is (here the config in use, which it replaced with the copy): refused, nothing written.
    const before = readFileSync(config, 'utf8');
    const over = await cli(['state', 'backup', '--to', config, '-c', config]);
    expect({ code: over.code, stderr: over.stderr.trim() }).toEqual({
      code: 2,
      stderr: `${config} already exists: a backup is written to a new file; give --to another name, or remove that file first`,
    });
    expect(readFileSync(config, 'utf8')).toBe(before);
  });

  it('refuses a backup when there is no state yet', async () => {
    const config = await site(tempDir());
    const run = await cli(['state', 'backup', '-c', config]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('no state database at');
  });

  it('keeps only the newest automatic backups', async () => {
    const stateDir = join(tempDir(), 'state');
    await (await openSqlite(databasePath(stateDir))).close();
    for (let hour = 10; hour < 15; hour += 1) await automaticBackup(databasePath(stateDir), new Date(`2026-11-28T${hour}:00:00Z`));
    const kept = readdirSync(join(stateDir, 'backups')).sort();
    expect(kept).toHaveLength(AUTOMATIC_BACKUPS_KEPT);
    expect(kept[0]).toContain('20261128T120000Z');
  });

  it('restore refuses a file that is not a pricing-agent state and leaves the state as it was', async () => {
    const dir = tempDir();
    const config = await site(dir);
    await (await openSqlite(databasePath(join(dir, 'state')))).close();
    const before = statSync(databasePath(join(dir, 'state'))).mtimeMs;
    const other = join(dir, 'other.db');
    const db = new BetterSqlite3(other);
    db.exec('CREATE TABLE t (x)');
    db.close();
    await writeFile(join(dir, 'text.db'), 'not a database at all, just some text that is long enough to be read\n'.repeat(20));
    for (const file of [other, join(dir, 'text.db')]) {
      const run = await cli(['state', 'restore', file, '-c', config]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`${file} is not a pricing-agent state`);
    }
    // A file that is not there: a usage mistake (it printed SQLite's "unable to open database file", exit 1).
    const missing = await cli(['state', 'restore', join(dir, 'nope.db'), '-c', config]);
    expect({ code: missing.code, stderr: missing.stderr.trim() }).toEqual({ code: 2, stderr: `${join(dir, 'nope.db')}: no such file; give the backup file to restore` });
    expect(statSync(databasePath(join(dir, 'state'))).mtimeMs).toBe(before);
  });

  it('restore refuses while an agent answers on the configured address', async () => {
    daemon = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ready":true,"state":"running","reasons":[]}'));
    await new Promise<void>((done) => daemon?.listen(0, '127.0.0.1', done));
    const dir = tempDir();
    const config = await site(dir, (daemon.address() as AddressInfo).port);
    await (await openSqlite(databasePath(join(dir, 'state')))).close();
    const file = join(dir, 'copy.db');
    expect((await cli(['state', 'backup', '--to', file, '-c', config])).code).toBe(0);
    const run = await cli(['state', 'restore', file, '-c', config]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/an agent answers at http:\/\/127\.0\.0\.1:\d+\/readyz: stop it first/);
    expect(existsSync(`${databasePath(join(dir, 'state'))}.restoring`)).toBe(false);
  });
});
