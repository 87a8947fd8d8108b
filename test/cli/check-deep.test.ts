/**
 * `pricing-agent check --deep`: the read-only questions of src/api/deep-check.ts against every dialect (what holds
 * and what differs, with what the agent does), and the command's exit code and JSON when something differs that the
 * agent cannot work around.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { runDeepCheck, type Finding } from '../../src/api/deep-check.ts';
import { DIALECT_NAMES, startSandbox, type SandboxHandle } from '../../src/sandbox/index.ts';
import { runCli } from '../support/run-cli.ts';
import { startScriptedServer, type ScriptedServer } from '../support/scripted-server.ts';

const dispatcher = new Agent({ allowH2: false });
afterAll(() => dispatcher.close());

describe('runDeepCheck', () => {
  let sandbox: SandboxHandle;
  afterEach(() => sandbox.close());

  it.each(DIALECT_NAMES)('%s: nothing fails; each difference comes with what the agent does', async (dialect) => {
    sandbox = await startSandbox({ dialect, approvals: 30, largeGridRows: 0, jobPace: 'instant' });
    const client = new ApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey, dispatcher });
    const job = await client.productStore.import(await csvFile(`item_id,store_id,current_price\nX,${sandbox.control.stores[0]!},1.00\nY,nope,2.00\n`));
    const findings = await runDeepCheck(client, { jobIds: [job.job_id] });
    expect(findings.filter((f) => f.result === 'fails')).toEqual([]);
    for (const f of findings.filter((x) => x.result === 'differs')) expect(f.action, `${f.area}: ${f.assumption}`).not.toBe('');
    const differs = (assumption: RegExp) => findings.some((f) => f.result === 'differs' && assumption.test(f.assumption));
    expect(differs(/optional fields are sent as null/)).toBe(dialect === 'terse');
    expect(differs(/a listing ends at next_cursor null/)).toBe(dialect === 'terse' || dialect === 'lenient');
    expect(differs(/competitor prices take updated_after/)).toBe(dialect === 'strict');
    expect(differs(/UUIDs/)).toBe(dialect === 'terse');
    expect(differs(/job .*: status/)).toBe(dialect === 'lenient');
    expect(findings.filter((f: Finding) => f.area === 'jobs').length).toBeGreaterThan(0);
  });
});

describe('pricing-agent check --deep', () => {
  let server: ScriptedServer;
  const verify = { ok: true, user_id: '0d6f4a2b-1c3e-4b5a-8f9e-2a1b3c4d5e6f', api_key_id: '1d6f4a2b-1c3e-4b5a-8f9e-2a1b3c4d5e6f' };
  beforeAll(async () => {
    // A server whose approved prices carry no price: the agent cannot work around that.
    server = await startScriptedServer([
      { reply: 200, body: verify },
      { reply: 200, body: verify },
      { reply: 200, body: { items: [{ id: 1, currency_code: 'EUR', approved_at: '2026-11-20T10:00:00Z' }], next_cursor: null } },
      ...Array.from({ length: 12 }, () => ({ reply: 200, body: { items: [], next_cursor: null } })),
    ]);
  });
  afterAll(() => server.close());

  it('exits 1 with the failing assumption in the JSON when the agent cannot work with the answers', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pa-deep-'));
    const config = join(dir, 'pricing-agent.yaml');
    await writeFile(config, `api:\n  base_url: ${server.url}\n  key: svc_live_deep_check_key_000111222333\nstate:\n  dir: ${dir}/state\n`);
    const run = await runCli(['check', '--deep', '--json', '--no-retry', '--config', config]);
    expect(run.code).toBe(1);
    const out = JSON.parse(run.stdout) as { ok: boolean; findings: Finding[] };
    expect(out.ok).toBe(false);
    expect(out.findings).toContainEqual(expect.objectContaining({ area: 'approved prices', result: 'fails' }));
  });
});

async function csvFile(text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'pa-deep-csv-'));
  const path = join(dir, 'stores.csv');
  await writeFile(path, text);
  return path;
}
