/**
 * Commands load what their work needs, not what another command's does: on SQLite state none loads the PostgreSQL
 * driver (src/store/postgres/location.ts); `files list` and `files show` load neither the HTTP client nor the push
 * pipeline (src/cli/commands/files.ts), and `status --offline` no HTTP client. The probe counts the modules of pg
 * and of undici in the CommonJS module cache of the command's process when it exits; a command that needs both
 * (`files retry` on PostgreSQL state) shows that it finds them. No command loads Node's own copy of undici, which an
 * import statement of node:http pulls in (src/node-http.ts).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { databasePath, openSqlite } from '../../src/store/sqlite/open-sqlite.ts';
import { tempDirForTest } from '../support/after-test.ts';
import { runCli, type CliRun } from '../support/run-cli.ts';
import { refusedUrl } from '../support/scripted-server.ts';

/** Preloaded into the command's process: how many modules of each package were loaded, printed at exit. */
const PROBE = `import { createRequire } from 'node:module';
const cache = createRequire(process.cwd() + '/').cache;
const count = (name) => Object.keys(cache).filter((m) => m.includes('/node_modules/' + name + '/')).length;
const nodeUndici = () => process.moduleLoadList.includes('NativeModule internal/deps/undici/undici');
process.on('exit', () => process.stderr.write('\\nloaded: pg=' + count('pg') + ' undici=' + count('undici') + ' node-undici=' + nodeUndici() + '\\n'));
`;

const KEY = `svc_live_${'0'.repeat(42)}`;

async function probed(args: string[], state: string): Promise<{ run: CliRun; pg: number; undici: number; nodeUndici: boolean }> {
  const dir = tempDirForTest('pa-lazy-modules-');
  const config = join(dir, 'pricing-agent.yaml');
  await writeFile(config, `api:\n  base_url: ${await refusedUrl()}\n  key: ${KEY}\nstate:\n  dir: ./state\n${state}sources: []\n`);
  if (state === '') await (await openSqlite(databasePath(join(dir, 'state')))).close();
  const probe = join(dir, 'probe.mjs');
  await writeFile(probe, PROBE);
  const run = await runCli([...args, '--config', config], { NODE_OPTIONS: `--import=${pathToFileURL(probe).href}` });
  const loaded = /loaded: pg=(\d+) undici=(\d+) node-undici=(true|false)/.exec(run.stderr);
  expect(loaded, run.stderr).not.toBeNull();
  return { run, pg: Number(loaded?.[1]), undici: Number(loaded?.[2]), nodeUndici: loaded?.[3] === 'true' };
}

it('files list and status --offline on SQLite state load neither pg nor undici; files retry on PostgreSQL state loads both; none loads Node\'s own undici', async () => {
  for (const args of [['files', 'list'], ['status', '--offline']]) {
    const { run, pg, undici, nodeUndici } = await probed(args, '');
    expect(run.code, run.stderr).toBe(0);
    expect({ pg, undici, nodeUndici }, args.join(' ')).toEqual({ pg: 0, undici: 0, nodeUndici: false });
  }
  const refused = new URL(await refusedUrl());
  const retry = await probed(['files', 'retry', '1'], `  backend: postgres\n  postgres:\n    url: postgres://agent@127.0.0.1:${refused.port}/pricing\n`);
  expect(retry.run.stderr).toContain('cannot connect to PostgreSQL');
  expect(retry.pg).toBeGreaterThan(0);
  expect(retry.undici).toBeGreaterThan(0);
  expect(retry.nodeUndici).toBe(false);
});
