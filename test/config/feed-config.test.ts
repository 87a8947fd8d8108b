/**
 * The `feed:` section: off by default; tokens only as files or digests, never kept in the Config; TLS required away
 * from loopback (plain HTTP refused there); every mistake reported with its line, never with a token.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDuration, parseListen, sha256Hex } from '../../src/config/feed-schema.ts';
import { loadConfig } from '../../src/config/index.ts';
import { redactSecrets } from '../../src/log.ts';
import { API, capturedLogger, KEY, load, loadError, tempDir, writeConfig } from './support.ts';

const TLS_DIR = new URL('../fixtures/feed-tls/', import.meta.url).pathname;
const TOKEN = 'a'.repeat(8) + '0123456789abcdef0123456789abcdef0123456789abcdef';

function tokenFile(dir: string, name: string, content: string, mode = 0o600): string {
  const file = join(dir, name);
  writeFileSync(file, content, { mode });
  chmodSync(file, mode);
  return file;
}

describe('feed config', () => {
  it('is off by default', async () => {
    const config = await load(API);
    expect(config.feed).toMatchObject({ listen: null, tls: null, consumers: [], apply_deadline: '2h' });
  });

  it('reads a token file, keeps only its SHA-256, and hides the token from every log line', async () => {
    const dir = tempDir();
    tokenFile(dir, 'pos.token', `${TOKEN}\n`);
    const yaml = `${API}feed:\n  listen: 127.0.0.1:9465\n  consumers:\n    - name: pos-1\n      token_file: ./pos.token\n      stores: [s-1, s-2, s-1]\n    - name: mw\n      token_sha256: ${sha256Hex('b'.repeat(40)).toUpperCase()}\n      stores: "*"\n`;
    const config = await loadConfig(writeConfig(yaml, 'pricing-agent.yaml', dir), { PRICING_API_KEY: KEY }, { logger: capturedLogger().logger });
    expect(config.feed.consumers).toEqual([
      { name: 'pos-1', token_file: join(dir, 'pos.token'), token_sha256: sha256Hex(TOKEN), stores: ['s-1', 's-2'] },
      { name: 'mw', token_file: null, token_sha256: sha256Hex('b'.repeat(40)), stores: '*' },
    ]);
    expect(JSON.stringify(config)).not.toContain(TOKEN);
    expect(redactSecrets(`Authorization: Bearer ${TOKEN}`)).toBe('Authorization: Bearer [REDACTED]');
  });

  it('warns once about a token file that others can read', async () => {
    const dir = tempDir();
    tokenFile(dir, 'pos.token', TOKEN, 0o644);
    const { logger, records } = capturedLogger();
    const yaml = `${API}feed:\n  consumers:\n    - name: pos-1\n      token_file: ./pos.token\n      stores: [s-1]\n`;
    await loadConfig(writeConfig(yaml, 'pricing-agent.yaml', dir), { PRICING_API_KEY: KEY }, { logger });
    expect(records().map((r) => [r['setting'], r['msg']])).toEqual([
      ['feed.consumers[0].token_file', expect.stringContaining('the token file') as unknown],
    ]);
  });

  it('refuses plain HTTP on an address that is not loopback', async () => {
    for (const listen of ['0.0.0.0:9465', '10.1.2.3:9465', '"[::]:9465"', ':9465']) {
      const error = await loadError(`${API}feed:\n  listen: ${listen}\n`);
      expect(error.problems.map((p) => [p.path, p.message])).toEqual([
        ['feed.tls', expect.stringContaining('is not a loopback address: set feed.tls (cert_file, key_file)') as unknown],
      ]);
    }
    for (const listen of ['127.0.0.1:9465', 'localhost:0', '"[::1]:9465"']) {
      expect((await load(`${API}feed:\n  listen: ${listen}\n`)).feed.listen).toBeTypeOf('string');
    }
    const tls = `  tls:\n    cert_file: ${TLS_DIR}cert.pem\n    key_file: ${TLS_DIR}key.pem\n`;
    expect((await load(`${API}feed:\n  listen: 0.0.0.0:9465\n${tls}`)).feed.tls).toEqual({ cert_file: `${TLS_DIR}cert.pem`, key_file: `${TLS_DIR}key.pem` });
  });

  it('checks that the certificate and key belong together', async () => {
    const mismatched = `${API}feed:\n  listen: 0.0.0.0:9465\n  tls:\n    cert_file: ${TLS_DIR}cert.pem\n    key_file: ${TLS_DIR}other-key.pem\n`;
    const error = await loadError(mismatched);
    expect(error.problems[0]?.path).toBe('feed.tls');
    expect(error.problems[0]?.message).toContain('check that both are PEM and belong together');
    const missing = await loadError(`${API}feed:\n  listen: 0.0.0.0:9465\n  tls:\n    cert_file: ./nope.pem\n    key_file: ./nope.key\n`);
    expect(missing.problems[0]?.message).toMatch(/^cannot read .*nope\.pem \(ENOENT\)$/);
  });

  it('reports every consumer mistake with its line, never quoting a token', async () => {
    const dir = tempDir();
    tokenFile(dir, 'short.token', 'abc123');
    tokenFile(dir, 'same.token', TOKEN);
    const yaml = [
      API,
      'feed:\n  consumers:\n',
      '    - name: both\n      token_file: ./same.token\n      token_sha256: ' + sha256Hex('x'.repeat(40)) + '\n      stores: [s]\n',
      '    - name: neither\n      stores: [s]\n',
      '    - name: short\n      token_file: ./short.token\n      stores: [s]\n',
      '    - name: twin\n      token_sha256: ' + sha256Hex(TOKEN) + '\n      stores: [s]\n',
      '    - name: twin\n      token_sha256: ' + sha256Hex('y'.repeat(40)) + '\n      stores: []\n',
      '    - name: "bad name"\n      token_sha256: nothex\n      stores: "all"\n',
    ].join('');
    const error = await loadConfig(writeConfig(yaml, 'pricing-agent.yaml', dir), { PRICING_API_KEY: KEY }, { logger: capturedLogger().logger }).then(
      () => {
        throw new Error('expected a ConfigError');
      },
      (e: unknown) => e as { problems: { path: string; line?: number; message: string }[]; message: string },
    );
    const problems = error.problems.map((p) => `${p.path}: ${p.message}`);
    expect(problems).toEqual(
      expect.arrayContaining([
        'feed.consumers[0].token_file: set exactly one of token_file and token_sha256',
        'feed.consumers[1].token_file: set exactly one of token_file and token_sha256',
        expect.stringMatching(/^feed\.consumers\[2\]\.token_file: .*short\.token: a token is 32 to 512 characters/) as unknown as string,
        'feed.consumers[4].stores: must have at least 1 entries',
        expect.stringMatching(/^feed\.consumers\[5\]\.name: a name is 1-64 letters/) as unknown as string,
        'feed.consumers[5].token_sha256: expected 64 hexadecimal digits (sha256sum of the token)',
        'feed.consumers[5].stores: expected "*" or a list of store ids, e.g. [b3a1c2d4-...]',
      ]),
    );
    expect(error.problems.every((p) => p.line !== undefined)).toBe(true);
    expect(error.message).not.toContain('abc123');
    expect(error.message).not.toContain(TOKEN);
  });

  it('refuses two consumers with one name or one token', async () => {
    const twice = (a: string, b: string) =>
      `${API}feed:\n  consumers:\n    - name: ${a}\n      token_sha256: ${sha256Hex(TOKEN)}\n      stores: [s]\n    - name: ${b}\n      token_sha256: ${sha256Hex(a === b ? 'z'.repeat(40) : TOKEN)}\n      stores: [s]\n`;
    expect((await loadError(twice('pos', 'pos'))).problems.map((p) => p.message)).toEqual(['consumer pos is listed twice']);
    expect((await loadError(twice('pos', 'other'))).problems.map((p) => p.message)).toEqual([
      'other has the same token as pos: every consumer needs a token of its own',
    ]);
  });

  it('parses listen addresses and durations', () => {
    expect(parseListen('0.0.0.0:9465')).toEqual({ host: '0.0.0.0', port: 9465 });
    expect(parseListen('[::]:9465')).toEqual({ host: '::', port: 9465 });
    expect(parseListen(':9465')).toEqual({ host: '0.0.0.0', port: 9465 });
    expect(parseListen('host.example:70000')).toBeUndefined();
    expect(parseListen('9465')).toBeUndefined();
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('1d')).toBe(86_400_000);
    expect(parseDuration('90')).toBeUndefined();
    expect(parseDuration('')).toBeUndefined();
  });
});
