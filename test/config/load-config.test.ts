import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.ts';
import { API, KEY, load, loadError, PULL_DEFAULTS, tempDir, writeConfig } from './support.ts';

describe('loadConfig: defaults and shape', () => {
  it('fills every default and resolves paths against the config file directory', async () => {
    const dir = tempDir();
    const file = writeConfig(API, 'agent.yaml', dir);
    const config = await loadConfig(file, { PRICING_API_KEY: KEY });
    expect(config).toEqual({
      api: {
        base_url: 'https://api.example.com',
        key: KEY,
        key_file: null,
        timeout_ms: 30000,
        attempt_deadline_ms: 300000,
        max_response_bytes: 67108864,
        max_retry_after: '15m',
        max_connections: 4,
        ca_file: null,
        proxy: null,
        no_proxy: [],
      },
      state: { dir: join(dir, 'state'), backend: 'sqlite', postgres: null },
      log: { level: 'info', pretty: false },
      sources: [],
      http: { enabled: true, host: '127.0.0.1', port: 9464, console: true, allowed_hosts: [] },
      daemon: { shutdown_timeout_ms: 30000, key_check_interval_ms: 60000 },
      pull: PULL_DEFAULTS,
      outbox: { exports: null },
      feed: {
        listen: null,
        tls: null,
        consumers: [],
        apply_deadline: '2h',
        rate_limit: { requests_per_second: 20, burst: 100 },
        max_connections: 4096,
        max_connections_per_address: 256,
        max_requests_per_consumer: 8,
      },
      ha: { enabled: false, node_name: expect.stringMatching(/^[A-Za-z0-9]/) as string, lease_s: 10 },
    });
  });

  it('ha.enabled needs the state in PostgreSQL; lease_s stays within 3..120', async () => {
    const error = await loadError(`${API}ha:\n  enabled: true\n  node_name: backoffice-a\n`);
    expect(error.problems).toEqual([
      expect.objectContaining({ path: 'ha.enabled', message: 'ha.enabled needs the state in PostgreSQL: set state.backend: postgres (docs/ha.md)' }),
    ]);
    expect((await loadError(`${API}ha:\n  lease_s: 2\n`)).problems[0]).toMatchObject({ path: 'ha.lease_s' });
    expect((await loadError(`${API}ha:\n  node_name: "a b"\n`)).problems[0]).toMatchObject({ path: 'ha.node_name' });
  });

  it('treats an empty value as not set', async () => {
    const config = await load(`${API}  timeout_ms:\nstate:\nlog:\n  level:\n`);
    expect(config.api.timeout_ms).toBe(30000);
    expect(config.log.level).toBe('info');
  });

  it('returns a deeply frozen config', async () => {
    const config = await load(`${API}  no_proxy: [a.example]\n`);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.api)).toBe(true);
    expect(Object.isFrozen(config.api.no_proxy)).toBe(true);
    expect(() => {
      (config.api as { timeout_ms: number }).timeout_ms = 1;
    }).toThrow(TypeError);
    expect(() => (config.api.no_proxy as string[]).push('x')).toThrow(TypeError);
  });

  it('accepts YAML merge keys (for sections that repeat settings)', async () => {
    const merged = await load(`${API}log:\n  <<: { level: debug, pretty: true }\n  pretty: false\n`);
    expect(merged.log).toEqual({ level: 'debug', pretty: false });
  });
});

describe('loadConfig: errors name the YAML path and line', () => {
  it('an unknown key, with a did-you-mean', async () => {
    const error = await loadError(`${API}  timeout: 5000\nlog:\n  levle: debug\n`);
    expect(error.message.split('\n').slice(1)).toEqual([
      '  api.timeout: unknown key (did you mean timeout_ms?) (line 4)',
      '  log.levle: unknown key (did you mean level?) (line 6)',
    ]);
  });

  it('an unknown key far from any known one lists the allowed keys', async () => {
    const error = await loadError(`${API}state:\n  database_location: /x\n`);
    expect(error.problems).toEqual([{ path: 'state.database_location', message: 'unknown key (allowed here: dir, backend, postgres)', line: 5 }]);
  });

  it('an unknown top-level section', async () => {
    const error = await loadError(`${API}sorces: []\n`);
    expect(error.problems[0]).toMatchObject({ path: 'sorces', line: 4 });
  });

  it('a wrong type', async () => {
    const error = await loadError(`${API}  timeout_ms: 30s\n  max_connections: 2.5\nlog:\n  pretty: yes please\n`);
    expect(error.problems).toEqual([
      { path: 'api.timeout_ms', message: 'expected a number, got text', line: 4 },
      { path: 'api.max_connections', message: 'expected a whole number, got a decimal number', line: 5 },
      { path: 'log.pretty', message: 'expected true or false, got text', line: 7 },
    ]);
  });

  it('a value out of range and a value not in the list', async () => {
    const error = await loadError(`${API}  max_connections: 65\n  timeout_ms: 10\nlog:\n  level: verbose\n`);
    expect(error.problems).toEqual([
      { path: 'api.max_connections', message: 'must be at most 64', line: 4 },
      { path: 'api.timeout_ms', message: 'must be at least 1000', line: 5 },
      { path: 'log.level', message: 'expected one of trace, debug, info, warn, error, fatal', line: 7 },
    ]);
  });

  it('choices quoted where they are signs, a mirror stream\'s choices named, one line for a number far out of range', async () => {
    const error = await loadError(
      `${API}pull:\n  mirrors:\n    - stream: productz\nsources:\n  - name: a\n    entity: products\n    path: ./a\n    delimiter: "xx"\n    batch_size: 99999999999999999999\n`,
    );
    expect(error.problems).toEqual([
      { path: 'pull.mirrors[0].stream', line: 6, message: 'expected one of products, product_store, transactions, competitor_prices, grids' },
      { path: 'sources[0].delimiter', line: 11, message: 'expected one of auto, ",", ";", "\\t", "|"' },
      { path: 'sources[0].batch_size', line: 12, message: 'must be at most 10000' },
    ]);
  });

  it('http.host with a port (or in brackets): the port goes in http.port', async () => {
    const message = 'an address without a port or brackets (e.g. 127.0.0.1, 0.0.0.0 or ::): the port goes in http.port';
    for (const host of ['0.0.0.0:9464', '[::1]', 'localhost:']) {
      const error = await loadError(`${API}http:\n  host: "${host}"\n`);
      expect(error.problems, host).toEqual([{ path: 'http.host', message, line: 5 }]);
    }
    for (const host of ['::', '::1', 'pricing.local', '10.0.0.5']) await expect(load(`${API}http:\n  host: "${host}"\n`)).resolves.toBeDefined();
  });

  it('a section of the wrong kind points at its key', async () => {
    const error = await loadError(`${API}state: /var/lib/agent\n`);
    expect(error.problems).toEqual([{ path: 'state', message: 'expected a mapping (key: value lines), got text', line: 4 }]);
  });

  it('a missing required key points at its parent', async () => {
    const error = await loadError('log:\n  level: info\napi:\n  key: ${PRICING_API_KEY}\n');
    expect(error.problems).toEqual([{ path: 'api.base_url', message: 'is required', line: 3 }]);
    const noApi = await loadError('log:\n  level: info\n');
    expect(noApi.problems).toEqual([{ path: 'api', message: 'is required' }]);
  });

  it('two YAML documents in the file, and a file saved as UTF-16: what to do, not the parser\'s words', async () => {
    const two = await loadError(`${API}---\nstate:\n  dir: ./s\n`);
    expect(two.problems).toEqual([
      { path: '', line: 4, message: "YAML syntax: more than one document: the file holds one configuration: remove the '---' line and merge what follows it into the sections above" },
    ]);
    const dir = tempDir();
    const utf16 = join(dir, 'unicode.yaml');
    writeFileSync(utf16, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(API, 'utf16le')]));
    await expect(loadConfig(utf16, { PRICING_API_KEY: KEY })).rejects.toThrow(
      `Config file ${utf16} is not UTF-8 (it looks like UTF-16, "Unicode" in Notepad): save it as UTF-8 and run the command again.`,
    );
  });

  it('a YAML syntax error, with its line and what to fix', async () => {
    const error = await loadError(`${API}log:\n  level: info\n pretty: true\n`);
    expect(error.problems).toEqual([
      { path: '', message: 'YAML syntax: All mapping items must start at the same column: indent this key with as many spaces as the other keys of its section', line: 6 },
    ]);
  });

  it('the indentation mistakes of hand-edited YAML: one problem per line, each with what to fix', async () => {
    const item = await loadError(`${API}sources:\n  - name: a\n    entity: products\n   path: ./x\n`);
    expect(item.problems).toEqual([{ path: '', message: expect.stringContaining("indent this key like the other keys of its list item") as string, line: 7 }]);
    const tab = await loadError(`${API}log:\n\tlevel: info\n`);
    expect(tab.problems[0]?.message).toMatch(/Tabs are not allowed as indentation: indent with spaces only, never tabs$/);
    const deeper = await loadError(`${API}log:\n  level: info\n    pretty: true\n`);
    expect(deeper.problems).toHaveLength(1); // the parser reports two errors for this one mistake
    expect(deeper.problems[0]?.message).toMatch(/'key: value' on one line/);
    const quote = await loadError(`${API}log:\n  level: "info\n  pretty: true\n`);
    expect(quote.problems[0]?.message).toMatch(/close the quote on the line where it opens$/);
  });

  it('a duplicate key', async () => {
    const error = await loadError(`${API}log:\n  level: info\n  level: debug\n`);
    expect(error.message).toMatch(/YAML syntax: .*unique/i);
  });

  it('an empty file', async () => {
    const error = await loadError('# nothing yet\n');
    expect(error.message).toMatch(/is empty: copy config\.example\.yaml/);
  });

  it('a missing file: one sentence naming the path and how to create one', async () => {
    const file = join(tempDir(), 'absent.yaml');
    const error = await loadConfig(file, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe('CONFIG_INVALID');
    expect((error as ConfigError).message).toBe(
      `Config file ${file} not found: copy config.example.yaml to ${file} and edit it, or pass --config <file>.`,
    );
  });

  it.skipIf(process.getuid?.() === 0)('an unreadable file', async () => {
    const file = writeConfig(API);
    chmodSync(file, 0o000);
    const error = await loadConfig(file, {}).catch((e: unknown) => e);
    expect((error as ConfigError).message).toBe(`Cannot read config file ${file}: permission denied.`);
  });

  it('a directory given as the file', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'pricing-agent.yaml'));
    const error = await loadConfig(join(dir, 'pricing-agent.yaml'), {}).catch((e: unknown) => e);
    expect((error as ConfigError).message).toContain('it is a directory');
  });

  it('the message never contains a stack trace or a value from the file', async () => {
    const error = await loadError(`${API}  timeout_ms: secret-looking-value\n`);
    expect(error.message).not.toContain('secret-looking-value');
    expect(error.message).not.toMatch(/\n\s+at /);
  });
});
