import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, readApiKey, redactConfig } from '../../src/config/index.ts';
import { capturedLogger, KEY, load, loadError, tempDir, writeConfig } from './support.ts';

const BASE = 'api:\n  base_url: https://api.example.com\n';

/** A key file with `content` and `mode` in a fresh temp dir, plus a config pointing at it (relative path). */
function keyFileSetup(content: string, mode: number) {
  const dir = tempDir();
  const keyFile = join(dir, 'api-key');
  writeFileSync(keyFile, content);
  chmodSync(keyFile, mode);
  const file = writeConfig(`${BASE}  key_file: ./api-key\n`, 'pricing-agent.yaml', dir);
  return { dir, keyFile, file };
}

describe('api.key', () => {
  it('takes the key from the environment and trims it', async () => {
    const config = await load(`${BASE}  key: \${PRICING_API_KEY}\n`, { PRICING_API_KEY: ` ${KEY}\n` });
    expect(config.api.key).toBe(KEY);
    expect(config.api.key_file).toBeNull();
  });

  it('refuses a key without the svc_live_ prefix, without quoting the key', async () => {
    const wrong = 'sk_test_abcdef0123456789';
    const error = await loadError(`${BASE}  key: \${PRICING_API_KEY}\n`, { PRICING_API_KEY: wrong });
    expect(error.problems).toEqual([
      {
        path: 'api.key',
        line: 3,
        message:
          'the API key does not start with "svc_live_"; copy the whole key from the web application (settings, integrations, API access card)',
      },
    ]);
    expect(error.message).not.toContain(wrong);
    expect(error.message).not.toContain('abcdef0123456789');
  });

  it('tells how to fix a key pasted with a prefix (Bearer ...)', async () => {
    const error = await loadError(`${BASE}  key: "Bearer \${PRICING_API_KEY}"\n`);
    expect(error.message).toContain('spaces, line breaks or control characters');
    expect(error.message).not.toContain(KEY);
    const glued = await loadError(`${BASE}  key: "x\${PRICING_API_KEY}"\n`);
    expect(glued.message).toContain('remove what comes before "svc_live_"');
    expect(glued.message).not.toContain(KEY);
  });

  it('needs exactly one of key and key_file', async () => {
    const none = await loadError(BASE);
    expect(none.problems).toEqual([
      { path: 'api', line: 1, message: 'no API key: set api.key (usually ${PRICING_API_KEY}) or api.key_file' },
    ]);
    const empty = await loadError(`${BASE}  key: \${PRICING_API_KEY:-}\n`, { PRICING_API_KEY: undefined });
    expect(empty.problems[0]?.message).toMatch(/^no API key/);
    const { dir } = keyFileSetup(KEY, 0o600);
    const both = await loadConfig(
      writeConfig(`${BASE}  key: \${PRICING_API_KEY}\n  key_file: api-key\n`, 'both.yaml', dir),
      { PRICING_API_KEY: KEY },
    ).catch((e: unknown) => e);
    expect((both as ConfigError).problems).toEqual([
      { path: 'api.key_file', line: 4, message: 'set either api.key or api.key_file, not both' },
    ]);
  });

  it('redactConfig replaces the key with ***', async () => {
    const config = await load(`${BASE}  key: \${PRICING_API_KEY}\n`);
    const printed = JSON.stringify(redactConfig(config));
    expect(printed).not.toContain(KEY);
    expect(redactConfig(config).api.key).toBe('***');
    expect(config.api.key).toBe(KEY);
  });
});

describe('api.key_file', () => {
  it('reads the file relative to the config, trimmed, without a warning when private', async () => {
    const { keyFile, file } = keyFileSetup(`\n  ${KEY}  \n\n`, 0o600);
    const log = capturedLogger();
    const config = await loadConfig(file, {}, { logger: log.logger });
    expect(config.api).toMatchObject({ key: KEY, key_file: keyFile });
    expect(log.lines).toEqual([]);
  });

  it.each([0o640, 0o604, 0o620, 0o644])('warns through the logger when the mode is %o', async (mode) => {
    const { keyFile, file } = keyFileSetup(KEY, mode);
    const log = capturedLogger();
    await loadConfig(file, {}, { logger: log.logger });
    const [record] = log.records();
    expect(log.lines).toHaveLength(1);
    expect(record).toMatchObject({ level: 'warn', setting: 'api.key_file', line: 3 });
    expect(record?.['msg']).toContain(`${keyFile} is accessible by group or others (mode 0${mode.toString(8)})`);
    expect(record?.['msg']).toContain(`chmod 600 ${keyFile}`);
    expect(log.lines.join('')).not.toContain(KEY);
  });

  it('refuses a file holding a key without the prefix, without quoting it', async () => {
    const { keyFile, file } = keyFileSetup('not-a-live-key-987654\n', 0o600);
    const error = await loadConfig(file, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems[0]).toMatchObject({ path: 'api.key_file', line: 3 });
    expect((error as ConfigError).message).toContain(`${keyFile}: the API key does not start with "svc_live_"`);
    expect((error as ConfigError).message).not.toContain('not-a-live-key-987654');
  });

  it('an empty or missing file is a clear error', async () => {
    const { file, keyFile } = keyFileSetup('\n', 0o600);
    const empty = await loadConfig(file, {}).catch((e: unknown) => e);
    expect((empty as ConfigError).message).toContain(`${keyFile}: the API key is empty`);
    const missing = await loadError(`${BASE}  key_file: /nonexistent/pricing/api-key\n`);
    expect(missing.problems).toEqual([
      { path: 'api.key_file', line: 3, message: 'cannot read /nonexistent/pricing/api-key (no such file)' },
    ]);
  });

  it('works with a systemd credentials directory', async () => {
    const { dir } = keyFileSetup(`${KEY}\n`, 0o400);
    const file = writeConfig(`${BASE}  key_file: \${CREDENTIALS_DIRECTORY}/api-key\n`, 'systemd.yaml', tempDir());
    const config = await loadConfig(file, { CREDENTIALS_DIRECTORY: dir });
    expect(config.api.key).toBe(KEY);
    const unset = await loadConfig(file, {}).catch((e: unknown) => e);
    expect((unset as ConfigError).message).toContain(
      'api.key_file: environment variable CREDENTIALS_DIRECTORY is not set',
    );
  });

  it('readApiKey re-reads a rotated key from the file', async () => {
    const { keyFile, file } = keyFileSetup(KEY, 0o600);
    const config = await loadConfig(file, {});
    const rotated = 'svc_live_RotatedKey44445555666677';
    writeFileSync(keyFile, `${rotated}\n`);
    expect(await readApiKey(config.api)).toBe(rotated);
    expect(config.api.key).toBe(KEY);
    writeFileSync(keyFile, 'garbage-in-the-key-file\n');
    const error = await readApiKey(config.api).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).not.toContain('garbage-in-the-key-file');
  });

  it('readApiKey returns the inline key as loaded', async () => {
    const config = await load(`${BASE}  key: \${PRICING_API_KEY}\n`);
    expect(await readApiKey(config.api)).toBe(KEY);
  });
});
