/**
 * Regression (issue 11, failure 7): `check` gave up on a single 503, though GET /v1/auth/verify is idempotent and
 * the document's retry rule applies (5xx: up to 5 attempts, backoff from 1 s). It now follows the rule and says on
 * the terminal what it waits for. Dialect: any (the 503 comes from a scripted server: the sandbox's faults are
 * drawn at random).
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.ts';
import { startScriptedServer, type ScriptedServer } from '../support/scripted-server.ts';

const KEY = 'svc_live_check_retries_key_0000aaaa';
const verify = { ok: true, user_id: '0d6f4a2b-1c3e-4b5a-8f9e-2a1b3c4d5e6f', api_key_id: '1d6f4a2b-1c3e-4b5a-8f9e-2a1b3c4d5e6f' };
let server: ScriptedServer;
beforeAll(async () => {
  server = await startScriptedServer([{ reply: 503, body: { detail: 'Service Unavailable' } }, { reply: 200, body: verify }]);
});
afterAll(() => server.close());

it('check tries again after a 503, says so on stderr, and succeeds', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'pa-check-503-'));
  const config = join(dir, 'pricing-agent.yaml');
  await writeFile(config, `api:\n  base_url: ${server.url}\n  key: ${KEY}\nstate:\n  dir: ${dir}/state\n`);
  const run = await runCli(['check', '--config', config]);
  expect(run.code).toBe(0);
  expect(run.stdout).toContain('The key works.');
  expect(run.stderr).toMatch(/^check: .*\(503\).*trying again in [0-9.]+ s \(attempt 2 of 5, the API's retry rule\)$/m);
  expect(server.received.map((r) => r.url)).toEqual(['/v1/auth/verify', '/v1/auth/verify']);
});
