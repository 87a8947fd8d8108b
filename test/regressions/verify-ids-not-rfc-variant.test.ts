/**
 * Regression (issue 11, of the same kind): `check` and `status` refused an auth/verify answer whose user_id and
 * api_key_id are UUID-shaped but not of the RFC 4122 variant ("Invalid UUID"), though the key worked. Ids are now read
 * as any UUID-shaped string. Dialect: terse.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.ts';
import { runCli } from '../support/run-cli.ts';

let sandbox: SandboxHandle;
beforeAll(async () => {
  sandbox = await startSandbox({ dialect: 'terse', approvals: 0, largeGridRows: 0 });
});
afterAll(() => sandbox.close());

it('check prints the ids and exits 0', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'pa-verify-ids-'));
  const config = join(dir, 'pricing-agent.yaml');
  await writeFile(config, `api:\n  base_url: ${sandbox.url}\n  key: ${sandbox.apiKey}\nstate:\n  dir: ${dir}/state\n`);
  const run = await runCli(['check', '--json', '--config', config]);
  expect(run.code).toBe(0);
  const out = JSON.parse(run.stdout) as { user_id: string };
  expect(out.user_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-c[0-9a-f]{3}-[0-9a-f]{12}$/);
});
