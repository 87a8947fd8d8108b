/**
 * `pricing-agent check` as a person runs it: a child process, a real config file, a real server on loopback. Every
 * failure is one sentence of what is wrong and what to do, never a stack trace, and never the key.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusedUrl, startScriptedServer, type ScriptedServer } from '../support/scripted-server.ts';
import { runCli } from '../support/run-cli.ts';
import { testCertificates } from '../support/test-ca.ts';

const KEY = 'svc_live_check_command_key_77aa11';
const verify = { ok: true, user_id: '0d6f4a2b-1c3e-4b5a-8f9e-2a1b3c4d5e6f', api_key_id: '1d6f4a2b-1c3e-4b5a-8f9e-2a1b3c4d5e6f' };
let dir: string;
let server: ScriptedServer;

async function configFor(baseUrl: string, extra = ''): Promise<string> {
  const file = join(dir, `config-${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(file, `api:\n  base_url: ${baseUrl}\n  key: \${PRICING_API_KEY}\n${extra}state:\n  dir: ${dir}/state\n`);
  return file;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pa-check-'));
  server = await startScriptedServer([
    { reply: 200, body: verify },
    { reply: 200, body: verify },
    { reply: 401, body: { detail: 'invalid key' } },
  ]);
});
afterAll(() => server.close());

describe('pricing-agent check', () => {
  it('prints the base URL, user_id and api_key_id and exits 0', async () => {
    const run = await runCli(['check', '--config', await configFor(server.url)], { PRICING_API_KEY: KEY });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`API:        ${server.url}`);
    expect(run.stdout).toContain(`user_id:    ${verify.user_id}`);
    expect(run.stdout).toContain(`api_key_id: ${verify.api_key_id}`);
  });

  it('prints the same as JSON with --json', async () => {
    const run = await runCli(['check', '--json', '--config', await configFor(server.url)], { PRICING_API_KEY: KEY });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ ok: true, base_url: server.url, ...{ user_id: verify.user_id, api_key_id: verify.api_key_id } });
  });

  it('says the key was rejected on a 401, exits 1, and never prints the key', async () => {
    const run = await runCli(['check', '--config', await configFor(server.url)], { PRICING_API_KEY: KEY });
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/rejected the key \(401\).*api\.key or api\.key_file/);
    expect(run.stdout + run.stderr).not.toContain(KEY);
  });

  it('says the API cannot be reached when nothing listens (--no-retry: asked once)', async () => {
    const url = await refusedUrl();
    const run = await runCli(['check', '--json', '--no-retry', '--config', await configFor(url)], { PRICING_API_KEY: KEY });
    expect(run.code).toBe(1);
    const out = JSON.parse(run.stdout) as { ok: boolean; error: { code: string; message: string } };
    expect(out.ok).toBe(false);
    expect(out.error.code).toBe('API_TRANSPORT_ERROR');
    expect(out.error.message).toMatch(/^Cannot reach the API at .*connection was refused; check api\.base_url/);
  });

  it('refuses an untrusted TLS certificate and says what to do, without bypassing verification', async () => {
    const key = join(dir, 'tls.key');
    const cert = join(dir, 'tls.crt');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    const tls = createServer({ key: await readFile(key), cert: await readFile(cert) }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(verify));
    });
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(tls.address() as AddressInfo).port}`;
    try {
      const untrusted = await runCli(['check', '--config', await configFor(url)], { PRICING_API_KEY: KEY });
      expect(untrusted.code).toBe(1);
      expect(untrusted.stderr).toMatch(/TLS certificate of https:\/\/127\.0\.0\.1:\d+ is not trusted \(DEPTH_ZERO_SELF_SIGNED_CERT\).*api\.ca_file/);
      // With the certificate in api.ca_file the same server is trusted.
      const trusted = await runCli(['check', '--config', await configFor(url, `  ca_file: ${cert}\n`)], { PRICING_API_KEY: KEY });
      expect(trusted.stderr).toBe('');
      expect(trusted.code).toBe(0);
    } finally {
      tls.closeAllConnections();
      await new Promise((resolve) => tls.close(resolve));
    }
  });

  it('says an https:// URL reached a server that speaks plain HTTP, not that a certificate is untrusted', async () => {
    const run = await runCli(['check', '--no-retry', '--config', await configFor(server.url.replace('http:', 'https:'))], { PRICING_API_KEY: KEY });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^https:\/\/127\.0\.0\.1:\d+ answered in plain HTTP, not TLS \(ERR_SSL_WRONG_VERSION_NUMBER\): check the host and port in api\.base_url/);
    expect(run.stderr).not.toContain('not trusted');
  });

  it('names the host and the names in the certificate when they do not match', async () => {
    const certs = testCertificates(await mkdtemp(join(dir, 'altname-')), ['DNS:pricing.example.com', 'DNS:api.example.com']);
    const tls = createServer({ key: certs.key, cert: certs.cert }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(verify));
    });
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(tls.address() as AddressInfo).port}`;
    try {
      const run = await runCli(['check', '--config', await configFor(url, `  ca_file: ${certs.caFile}\n`)], { PRICING_API_KEY: KEY });
      expect(run.code).toBe(1);
      expect(run.stderr.trim()).toBe(
        `The TLS certificate of ${url} is not for the host 127.0.0.1 but for pricing.example.com, api.example.com: write api.base_url with a name the certificate is for, or have the server's certificate issued for 127.0.0.1.`,
      );
    } finally {
      tls.closeAllConnections();
      await new Promise((resolve) => tls.close(resolve));
    }
  });

  it('refuses a base URL that ends in /v1, with the URL to write instead', async () => {
    const run = await runCli(['config', 'validate', '--config', await configFor('https://pricing.example.com/eu/v1/')], { PRICING_API_KEY: KEY });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('api.base_url: ends in /v1: leave it out (write https://pricing.example.com/eu); the agent adds /v1 to every request itself (line 2)');
  });

  it('exits 2 with the config problem and its line on a config mistake', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(file, `api:\n  base_url: http://pricing.example.com\n  key: \${PRICING_API_KEY}\n`);
    const run = await runCli(['check', '--config', file], { PRICING_API_KEY: KEY });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/api\.base_url: .*https.*\(line 2\)/);
    expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });
});
