/**
 * Upgrades and rollbacks of a PostgreSQL state, as a person runs them (child processes, a config file with
 * `state.backend: postgres` and a password file):
 * - `state backup` writes the agent's schema with pg_dump to a file only its owner reads, `state restore` puts it back
 *   with pg_restore (rows written after the backup are gone, those before it are there), a dump of another schema is
 *   refused, the password is never printed, and without PostgreSQL's tools on PATH each says the command to run;
 * - the previous release's schema, upgraded by head, is dumped first (named on stderr); the old build refuses the
 *   upgraded schema; restored, the old build runs on it again with its rows;
 * - a schema migrated by a newer agent is refused with one sentence naming its version and the backup to restore.
 * Runs in the postgres project (it needs a cluster).
 */
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { countCurrentPrices, storeDeliveredPage } from '../../src/store/approved-prices.ts';
import { recordDeliveryIntent } from '../../src/store/delivery-intents.ts';
import pg from 'pg';
import { startSandbox } from '../../src/sandbox/index.ts';
import { postgresBinDir } from '../support/postgres-cluster.ts';
import { previousRelease } from '../support/previous-release.ts';
import { runCli, type CliRun } from '../support/run-cli.ts';
import { openTestDb, schemaFor, TEST_BACKEND, testCluster } from '../support/state-db.ts';
import { approval, tempDir } from '../store/support.ts';

const SECRET = 'a-password-that-must-never-show';
/** The cluster's own pg_dump and pg_restore first on PATH (a dump needs a pg_dump as new as the server). */
const TOOLS = { PATH: `${postgresBinDir() ?? ''}:${process.env['PATH'] ?? ''}` };

async function siteConfig(dir: string, apiUrl = 'http://127.0.0.1:9', sources = 'sources: []\n', key = `svc_live_${'k'.repeat(40)}`): Promise<string> {
  const { url } = await testCluster();
  const file = join(dir, 'pricing-agent.yaml');
  await writeFile(join(dir, 'pg-password'), `${SECRET}\n`, { mode: 0o600 });
  await writeFile(
    file,
    `api:\n  base_url: ${apiUrl}\n  key: ${key}\nhttp:\n  port: 1\n${sources}` +
      `state:\n  dir: ./state\n  backend: postgres\n  postgres:\n    url: ${url}\n    password_file: ./pg-password\n    schema: ${schemaFor(dir)}\n`,
  );
  return file;
}

async function storePage(dir: string, ids: number[], requestId: string): Promise<number> {
  const db = await openTestDb(dir);
  try {
    const intent = await recordDeliveryIntent(db, { requestId, filters: {}, cursor: null });
    await storeDeliveredPage(db, intent.id, ids.map((id) => approval(id)), null);
    return await countCurrentPrices(db);
  } finally {
    await db.close();
  }
}

describe.runIf(TEST_BACKEND === 'postgres')('pricing-agent state backup and restore on PostgreSQL', () => {
  it('dumps the schema with pg_dump and puts it back with pg_restore', async () => {
    const dir = tempDir();
    expect(await storePage(dir, [1, 2], '11111111-1111-4111-8111-111111111111')).toBe(2);
    const config = await siteConfig(dir);

    const backup = await runCli(['state', 'backup', '-c', config], TOOLS);
    expect(backup.code, backup.stderr).toBe(0);
    const file = /^backup written to (\S+\.dump)$/m.exec(backup.stdout)?.[1] ?? '';
    expect(dirname(file)).toBe(join(dir, 'state', 'backups'));
    expect(backup.stdout).toContain(`pricing-agent state restore ${file}`);
    expect((await stat(file)).mode & 0o777).toBe(0o600);

    // After the backup the state moves on; the restore takes it back to what the backup holds.
    expect(await storePage(dir, [3], '22222222-2222-4222-8222-222222222222')).toBe(3);
    const restore = await runCli(['state', 'restore', file, '-c', config], TOOLS);
    expect(restore.code, restore.stderr).toBe(0);
    expect(restore.stdout).toContain(`(schema ${schemaFor(dir)})`);
    const db = await openTestDb(dir);
    try {
      expect(await countCurrentPrices(db)).toBe(2);
    } finally {
      await db.close();
    }
    for (const run of [backup, restore]) expect(`${run.stdout}${run.stderr}`).not.toContain(SECRET);

    // A dump of another site's schema is refused: a restore replaces only the schema the config names.
    const other = tempDir();
    await storePage(other, [9], '44444444-4444-4444-8444-444444444444');
    const otherConfig = await siteConfig(other);
    const refused = await runCli(['state', 'restore', file, '-c', otherConfig], TOOLS);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(`${file} is a dump of schema ${schemaFor(dir)}, and the state is in schema ${schemaFor(other)}: restore a backup taken by state backup with this config`);
  });

  it('says the command to run when pg_dump and pg_restore are not on PATH', async () => {
    const dir = tempDir();
    await storePage(dir, [1], '33333333-3333-4333-8333-333333333333');
    const config = await siteConfig(dir);
    const noTools = { PATH: dirname(process.execPath) };
    const backup = await runCli(['state', 'backup', '--to', join(dir, 'x.dump'), '-c', config], noTools);
    expect(backup.code).toBe(1);
    expect(backup.stderr.trim()).toMatch(/^pg_dump is not on PATH: install PostgreSQL's client tools, or run pg_dump --schema=t_\w+ --format=custom --file=\S+x\.dump postgres:\/\/\S+$/);
    const restore = await runCli(['state', 'restore', join(dir, 'x.dump'), '-c', config], noTools);
    expect(restore.code).toBe(2); // a usage mistake, found before anything is touched, as on SQLite
    expect(restore.stderr.trim()).toMatch(/^\S+x\.dump: no such file; give the backup file to restore$/);
    await writeFile(join(dir, 'x.dump'), 'not a dump');
    const missingTool = await runCli(['state', 'restore', join(dir, 'x.dump'), '-c', config], noTools);
    expect(missingTool.stderr.trim()).toMatch(/^pg_restore is not on PATH: install PostgreSQL's client tools, or run DROP SCHEMA t_\w+ CASCADE, then pg_restore --single-transaction .*, with the agent stopped$/);
    const broken = await runCli(['state', 'restore', join(dir, 'x.dump'), '-c', config], TOOLS);
    expect(broken.code).toBe(1);
    expect(broken.stderr.trim()).toMatch(/^pg_restore failed: .*not a valid archive|^pg_restore failed: .*input file/);
  });

  it('upgrades the previous release after a dump; restored, the old build runs on its own schema again', async () => {
    const sandbox = await startSandbox({ approvals: 0, largeGridRows: 0 });
    try {
      const dir = tempDir();
      const runOld = previousRelease(tempDir());
      const env = { PRICING_API_KEY: sandbox.apiKey, ...TOOLS };
      await mkdir(join(dir, 'inbox', 'erp'), { recursive: true });
      const config = await siteConfig(dir, sandbox.url, 'sources:\n  - name: erp\n    entity: product_store\n    path: ./inbox/erp\n', sandbox.apiKey);
      const [s1, s2] = sandbox.control.state().stores;
      const csv = async (name: string, changed: string) => {
        const rows = Array.from({ length: 20 }, (_, i) => `M-${i},${i % 2 === 0 ? s1 : s2},${i === 7 ? changed : `1.${String(i).padStart(2, '0')}`}`);
        await writeFile(join(dir, name), `item_id,store_id,current_price\n${rows.join('\n')}\n`);
        return join(dir, name);
      };
      const push = async (name: string, changed: string, run: (args: string[], env?: Record<string, string>) => Promise<CliRun>) =>
        run(['push', await csv(name, changed), '--source', 'erp', '--json', '-c', config], env);
      const sent = (run: CliRun) => (JSON.parse(run.stdout) as { rows: Record<string, number> }).rows;

      const first = await push('first.csv', '1.07', runOld);
      expect(first.code, first.stderr).toBe(0);
      const upgraded = await push('second.csv', '1.17', (args, e) => runCli(args, e));
      expect(upgraded.code, upgraded.stderr).toBe(0);
      expect(sent(upgraded)).toMatchObject({ sent: 1, unchanged: 19 });
      const backup = /the state is upgraded: a backup of it was written to (\S+)/.exec(upgraded.stderr)?.[1] ?? '';
      expect(backup, upgraded.stderr).toMatch(new RegExp(`^${join(dir, 'state', 'backups')}/pricing-agent-pre-upgrade-0\\.1\\.0-\\d{8}T\\d{6}Z\\.dump$`));
      expect((await stat(backup)).mode & 0o777).toBe(0o600);

      const refused = await push('third.csv', '1.27', runOld);
      expect(refused.code).not.toBe(0);
      const restored = await runCli(['state', 'restore', backup, '-c', config], env);
      expect(restored.code, restored.stderr).toBe(0);
      // The old build runs on the schema as it was before the upgrade: only the row that differs from its first file is sent.
      const again = await push('third.csv', '1.27', runOld);
      expect(again.code, again.stderr).toBe(0);
      expect(sent(again)).toMatchObject({ sent: 1, unchanged: 19 });
    } finally {
      await sandbox.close();
    }
  }, 90_000);

  it('refuses a schema migrated by a newer agent with one sentence naming its version and the backup to restore', async () => {
    const dir = tempDir();
    await storePage(dir, [1], '55555555-5555-4555-8555-555555555555');
    const config = await siteConfig(dir);
    const { url } = await testCluster();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const schema = schemaFor(dir);
      await client.query(`INSERT INTO ${schema}.kysely_migration (name, timestamp) VALUES ('9999-future', '2026-11-28T11:00:00Z')`);
      await client.query(`INSERT INTO ${schema}.agent_meta (key, value) VALUES ('written_by_version', '9.9.9') ON CONFLICT (key) DO UPDATE SET value = excluded.value`);
    } finally {
      await client.end();
    }
    const start = await runCli(['pull', '-c', config]);
    expect(start.code).toBe(1);
    const lines = start.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^postgres:\/\/\S+ \(schema t_\w+\) was upgraded by pricing-agent 9\.9\.9 \(migrations 9999-future are unknown to this pricing-agent 0\.1\.0\): install that version or a newer one$/);
  });
});
