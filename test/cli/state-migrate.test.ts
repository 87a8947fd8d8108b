/**
 * `pricing-agent state migrate --to postgres` as a person runs it (a child process, a config file with
 * `state.backend: sqlite` and a `state.postgres` section): the SQLite state of a site that pulled and pushed is copied
 * into an empty schema, a second copy is refused, the agent then runs on PostgreSQL with everything there (status
 * shows the same feed and files), the password is never printed, and a running agent refuses the copy; a site after
 * a delta push (UUID platform ids kept as 16 bytes, 64-bit key hashes) moves and its next push sends only what
 * changed. Runs in the postgres project (it needs a cluster).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { storeDeliveredPage } from '../../src/store/approved-prices.ts';
import { recordDeliveryIntent } from '../../src/store/delivery-intents.ts';
import { openSqlite, databasePath } from '../../src/store/sqlite/open-sqlite.ts';
import { ackConsumer } from '../../src/store/price-feed.ts';
import { startSandbox } from '../../src/sandbox/index.ts';
import type { StatusReport } from '../../src/status/status-report.ts';
import { writeAgentConfig } from '../fixtures/push/push-fixtures.ts';
import { runCli } from '../support/run-cli.ts';
import { schemaFor, TEST_BACKEND, testCluster } from '../support/state-db.ts';
import { approval, tempDir } from '../store/support.ts';

const SECRET = 'a-password-that-must-never-show';
let daemon: Server | null = null;

afterAll(async () => {
  await new Promise<void>((resolve) => (daemon ? daemon.close(() => resolve()) : resolve()));
});

async function site(dir: string, httpPort: number, backend: 'sqlite' | 'postgres'): Promise<string> {
  const { url } = await testCluster();
  const file = join(dir, 'pricing-agent.yaml');
  await writeFile(join(dir, 'pg-password'), `${SECRET}\n`, { mode: 0o600 });
  await writeFile(
    file,
    `api:\n  base_url: http://127.0.0.1:9\n  key: svc_live_${'k'.repeat(40)}\nhttp:\n  port: ${httpPort}\nsources: []\n` +
      `state:\n  dir: ./state\n  backend: ${backend}\n  postgres:\n    url: ${url}\n    password_file: ./pg-password\n    schema: ${schemaFor(dir)}\n`,
  );
  return file;
}

describe.runIf(TEST_BACKEND === 'postgres')('pricing-agent state migrate --to postgres', () => {
  it('copies a site into an empty schema; the agent then runs on PostgreSQL with everything kept', async () => {
    const dir = tempDir();
    const sqlite = await openSqlite(databasePath(join(dir, 'state')));
    const intent = await recordDeliveryIntent(sqlite, { requestId: '11111111-1111-4111-8111-111111111111', filters: {}, cursor: null });
    await storeDeliveredPage(sqlite, intent.id, [approval(1), approval(2, { store_id: null }), approval(3)], null);
    await ackConsumer(sqlite, 'pos-1', 2);
    await sqlite.close();
    const config = await site(dir, 1, 'sqlite');

    const copy = await runCli(['state', 'migrate', '--to', 'postgres', '-c', config]);
    expect(copy.stderr).toContain('price_feed: 3 rows');
    expect(copy.stdout).toMatch(/^copied \d+ rows in \d+ tables to postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres \(schema t_/);
    expect(copy.code).toBe(0);
    expect(`${copy.stdout}${copy.stderr}`).not.toContain(SECRET);

    const again = await runCli(['state', 'migrate', '--to', 'postgres', '-c', config]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/is not empty \(\w+ has \d+ rows\): copy into a new, empty schema/);

    await writeFile(config, (await readFile(config, 'utf8')).replace('backend: sqlite', 'backend: postgres'));
    const status = await runCli(['status', '--json', '-c', config]);
    const report = JSON.parse(status.stdout) as StatusReport;
    expect(report.database).toMatchObject({ state: 'ok', path: expect.stringContaining(`(schema ${schemaFor(dir)})`) as string });
    expect(report.outbox).toMatchObject({ max_seq: 3, feed_rows: 3, consumers: [expect.objectContaining({ consumer: 'pos-1', last_seq: 2, lag: 1 })] });
    expect(`${status.stdout}${status.stderr}`).not.toContain(SECRET);
    const refused = await runCli(['state', 'migrate', '--to', 'postgres', '-c', config]);
    expect([refused.code, refused.stderr.trim()]).toEqual([1, 'state.backend is already postgres: there is nothing to migrate']);
  });

  it('refuses while an agent answers on the configured address', async () => {
    daemon = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ready":true,"state":"running","reasons":[]}'));
    await new Promise<void>((resolve) => daemon?.listen(0, '127.0.0.1', resolve));
    const dir = tempDir();
    const config = await site(dir, (daemon.address() as AddressInfo).port, 'sqlite');
    const run = await runCli(['state', 'migrate', '--to', 'postgres', '-c', config]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/an agent answers at http:\/\/127\.0\.0\.1:\d+\/readyz: stop it first/);
  });

  it('moves a site after a delta push; the next push on PostgreSQL sends only the changed row', async () => {
    const sandbox = await startSandbox({ approvals: 0, largeGridRows: 0 });
    try {
      const env = { PRICING_API_KEY: sandbox.apiKey };
      const dir = tempDir();
      await mkdir(join(dir, 'inbox', 'erp'), { recursive: true });
      const { url } = await testCluster();
      const config = await writeAgentConfig(dir, sandbox.url, [{ name: 'erp', entity: 'product_store', path: './inbox/erp' }], {
        http: { port: 1 },
        state: { dir: './state', backend: 'sqlite', postgres: { url, schema: schemaFor(dir) } },
      });
      const [s1, s2] = sandbox.control.state().stores;
      const csv = (changed: string) =>
        `item_id,store_id,current_price\n${Array.from({ length: 20 }, (_, i) => `M-${i},${i % 2 === 0 ? s1 : s2},${i === 7 ? changed : `1.${String(i).padStart(2, '0')}`}`).join('\n')}\n`;
      await writeFile(join(dir, 'first.csv'), csv('1.07'));
      const first = await runCli(['push', join(dir, 'first.csv'), '--source', 'erp', '--json', '-c', config], env);
      expect(first.code, first.stderr).toBe(0);
      // The state holds what the issue found: platform ids as 16 bytes (a UUID on SQLite).
      const sqlite = await openSqlite(databasePath(join(dir, 'state')));
      const kinds = await sqlite.all<{ kind: string }>(`SELECT DISTINCT typeof(platform_id) AS kind FROM delta_keys`);
      await sqlite.close();
      expect(kinds).toEqual([{ kind: 'blob' }]);

      const copy = await runCli(['state', 'migrate', '--to', 'postgres', '-c', config], env);
      expect(copy.code, `${copy.stdout}${copy.stderr}`).toBe(0);
      expect(copy.stderr).toContain('delta_keys: 20 rows');

      await writeFile(config, (await readFile(config, 'utf8')).replace('backend: sqlite', 'backend: postgres'));
      await writeFile(join(dir, 'second.csv'), csv('1.17'));
      const second = await runCli(['push', join(dir, 'second.csv'), '--source', 'erp', '--json', '-c', config], env);
      expect(second.code, `${second.stdout}${second.stderr}`).toBe(0);
      expect((JSON.parse(second.stdout) as { rows: Record<string, number> }).rows).toMatchObject({ read: 20, sent: 1, unchanged: 19 });
    } finally {
      await sandbox.close();
    }
  }, 60_000); // four runs of the CLI
});
