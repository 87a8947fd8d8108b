/**
 * A command on SQLite state never loads the PostgreSQL driver (src/store/postgres/location.ts): pg's modules cost
 * every start about 0.05 CPU-seconds for nothing. The probe counts pg's modules in the CommonJS module cache of the
 * command's process when it exits; run against a PostgreSQL state that refuses the connection, it finds them.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { databasePath, openSqlite } from '../../src/store/sqlite/open-sqlite.ts';
import { tempDirForTest } from '../support/after-test.ts';
import { runCli, type CliRun } from '../support/run-cli.ts';
import { refusedUrl } from '../support/scripted-server.ts';

/** Preloaded into the command's process: counts pg's modules in the CommonJS module cache when the process exits. */
const PROBE = `import { createRequire } from 'node:module';
const cache = createRequire(process.cwd() + '/').cache;
process.on('exit', () => process.stderr.write('\\npg-modules:' + Object.keys(cache).filter((m) => m.includes('/node_modules/pg/')).length + '\\n'));
`;

const KEY = `svc_live_${'0'.repeat(42)}`;

async function outboxStats(state: string): Promise<{ run: CliRun; pgModules: number }> {
  const dir = tempDirForTest('pa-pg-lazy-');
  const config = join(dir, 'pricing-agent.yaml');
  await writeFile(config, `api:\n  base_url: ${await refusedUrl()}\n  key: ${KEY}\nstate:\n${state}sources: []\n`);
  if (!state.includes('postgres')) await (await openSqlite(databasePath(join(dir, 'state')))).close();
  const probe = join(dir, 'probe.mjs');
  await writeFile(probe, PROBE);
  const run = await runCli(['outbox', 'stats', '--config', config], { NODE_OPTIONS: `--import=${pathToFileURL(probe).href}` });
  const count = /pg-modules:(\d+)/.exec(run.stderr)?.[1];
  expect(count, run.stderr).toBeDefined();
  return { run, pgModules: Number(count) };
}

it('outbox stats on SQLite state loads no module of pg; on PostgreSQL state it does', async () => {
  const sqlite = await outboxStats('  dir: ./state\n');
  expect(sqlite.run.code, sqlite.run.stderr).toBe(0);
  expect(sqlite.pgModules).toBe(0);
  const refused = new URL(await refusedUrl());
  const postgres = await outboxStats(`  dir: ./state\n  backend: postgres\n  postgres:\n    url: postgres://agent@127.0.0.1:${refused.port}/pricing\n`);
  expect(postgres.run.stderr).toContain('cannot connect to PostgreSQL');
  expect(postgres.pgModules).toBeGreaterThan(0);
});
