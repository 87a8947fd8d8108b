import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getCACertificates, rootCertificates } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { caCertificates, isLoopbackHost, maxRetryAfterMs, proxyFor, redactConfig } from '../../src/config/index.ts';
import { bypassesProxy } from '../../src/config/proxy.ts';
import { redactSecrets } from '../../src/log.ts';
import { load, loadError, tempDir } from './support.ts';

const withBase = (url: string, rest = '') => `api:\n  base_url: ${url}\n  key: \${PRICING_API_KEY}\n${rest}`;

describe('api.base_url: https except on loopback', () => {
  it.each([
    ['https://api.example.com', 'https://api.example.com'],
    ['https://API.Example.com/', 'https://api.example.com'],
    ['https://api.example.com:8443/pricing//', 'https://api.example.com:8443/pricing'],
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
    ['http://127.10.20.30/', 'http://127.10.20.30'],
    ['http://localhost', 'http://localhost'],
    ['http://LOCALHOST:3000/', 'http://localhost:3000'],
    ['http://[::1]', 'http://[::1]'],
    ['http://[::1]:9000/api/', 'http://[::1]:9000/api'],
  ])('accepts %s as %s', async (url, normalised) => {
    expect((await load(withBase(url))).api.base_url).toBe(normalised);
  });

  it.each(['http://example.com', 'http://10.0.0.5:8080', 'http://128.0.0.1', 'http://localhost.example.com'])(
    'refuses %s with a clear sentence',
    async (url) => {
      const error = await loadError(withBase(url));
      expect(error.problems).toEqual([
        {
          path: 'api.base_url',
          line: 2,
          message:
            'must use https:// (the API key is sent with every request); http:// is only allowed for loopback hosts (127.0.0.0/8, ::1, localhost)',
        },
      ]);
    },
  );

  it.each([
    ['not a url', 'is not a URL'],
    ['ftp://api.example.com', 'must be an https:// URL'],
    ['https://user:pw@api.example.com', 'must not contain a user name or password'],
    ['https://api.example.com/?x=1', 'must not contain a query'],
  ])('refuses %s', async (url, message) => {
    const error = await loadError(withBase(url));
    expect(error.problems[0]?.message).toContain(message);
    expect(error.message).not.toContain(':pw@');
  });

  it('isLoopbackHost', () => {
    for (const host of ['localhost', '127.0.0.1', '127.255.255.254', '::1', '[::1]']) expect(isLoopbackHost(host)).toBe(true);
    for (const host of ['example.com', '128.0.0.1', '127.0.0', '127.0.0.256', '::2', 'localhost.evil']) {
      expect(isLoopbackHost(host)).toBe(false);
    }
  });
});

describe('proxy', () => {
  const base = 'https://api.example.com';

  it('defaults to HTTPS_PROXY / https_proxy and NO_PROXY / no_proxy from the environment', async () => {
    const upper = await load(withBase(base), { HTTPS_PROXY: 'http://proxy.corp:3128', NO_PROXY: 'localhost, .corp  erp' });
    expect(upper.api).toMatchObject({ proxy: 'http://proxy.corp:3128', no_proxy: ['localhost', '.corp', 'erp'] });
    const lower = await load(withBase(base), {
      https_proxy: 'http://lower:1',
      HTTPS_PROXY: 'http://upper:2',
      no_proxy: 'a',
      NO_PROXY: 'b',
    });
    expect(lower.api).toMatchObject({ proxy: 'http://lower:1', no_proxy: ['a'] });
    const none = await load(withBase(base));
    expect(none.api).toMatchObject({ proxy: null, no_proxy: [] });
  });

  it('the file wins over the environment; an empty proxy means none', async () => {
    const env = { HTTPS_PROXY: 'http://env-proxy:3128', NO_PROXY: 'from-env' };
    const file = await load(withBase(base, '  proxy: http://file-proxy:8080\n  no_proxy: [a.example]\n'), env);
    expect(file.api).toMatchObject({ proxy: 'http://file-proxy:8080', no_proxy: ['a.example'] });
    const off = await load(withBase(base, '  proxy: ""\n'), env);
    expect(off.api.proxy).toBeNull();
  });

  it('refuses a proxy that is not an http(s) URL, naming where it came from', async () => {
    const fromFile = await loadError(withBase(base, '  proxy: socks5://p:1080\n'));
    expect(fromFile.problems).toEqual([
      { path: 'api.proxy', line: 4, message: 'must be an http:// or https:// URL, not socks5://' },
    ]);
    const fromEnv = await loadError(withBase(base), { HTTPS_PROXY: 'proxy.corp:3128x' });
    expect(fromEnv.problems[0]?.message).toMatch(/^HTTPS_PROXY from the environment /);
    // host:port without a scheme: said so (it read as "not proxy.corp://", the host taken for a scheme).
    const bare = await loadError(withBase(base), { HTTPS_PROXY: 'proxy.corp:3128' });
    expect(bare.problems[0]?.message).toBe('HTTPS_PROXY from the environment has no scheme: write it as http://host:port (or https://host:port)');
  });

  it('masks and registers a proxy password', async () => {
    const config = await load(withBase(base, '  proxy: http://agent:S3cr%40tPass@proxy.corp:3128\n'));
    expect(redactConfig(config).api.proxy).toBe('http://agent:***@proxy.corp:3128/');
    expect(redactSecrets('tried S3cr%40tPass and S3cr@tPass')).toBe('tried [REDACTED] and [REDACTED]');
  });

  it('proxyFor applies no_proxy and never proxies loopback', () => {
    const settings = (base_url: string, no_proxy: string[] = []) => ({ base_url, proxy: 'http://p:3128', no_proxy });
    expect(proxyFor(settings('https://api.example.com'))).toBe('http://p:3128');
    expect(proxyFor(settings('https://api.example.com', ['example.com']))).toBeNull();
    expect(proxyFor(settings('https://api.example.com', ['.example.com']))).toBeNull();
    expect(proxyFor(settings('https://example.com', ['*.example.com']))).toBe('http://p:3128');
    expect(proxyFor(settings('https://api.example.com', ['*']))).toBeNull();
    expect(proxyFor(settings('https://api.example.com', ['api.example.com:8443']))).toBe('http://p:3128');
    expect(proxyFor(settings('https://api.example.com:8443', ['api.example.com:8443']))).toBeNull();
    expect(proxyFor(settings('http://127.0.0.1:8080'))).toBeNull();
    expect(proxyFor(settings('http://[::1]:8080'))).toBeNull();
    expect(proxyFor({ base_url: 'https://api.example.com', proxy: null, no_proxy: [] })).toBeNull();
    expect(bypassesProxy('2001:db8::1', 443, ['[2001:db8::1]'])).toBe(true);
    expect(bypassesProxy('notexample.com', 443, ['example.com'])).toBe(false);
  });
});

describe('api.ca_file', () => {
  function pemFile(content: string): string {
    const file = join(tempDir(), 'ca.pem');
    writeFileSync(file, content);
    return file;
  }

  it('accepts a PEM bundle and adds it to the default roots', async () => {
    const pem = `${rootCertificates[0] ?? ''}\n${rootCertificates[1] ?? ''}\n`;
    const file = pemFile(pem);
    const config = await load(withBase('https://api.example.com', `  ca_file: ${file}\n`));
    expect(config.api.ca_file).toBe(file);
    const ca = caCertificates(config.api);
    expect(ca).toHaveLength(getCACertificates('default').length + 2);
    expect(caCertificates({ ca_file: null })).toBeUndefined();
  });

  it('refuses a missing file or one without certificates, at load time', async () => {
    const missing = await loadError(withBase('https://api.example.com', '  ca_file: /nonexistent/ca.pem\n'));
    expect(missing.problems).toEqual([
      { path: 'api.ca_file', line: 4, message: 'cannot read /nonexistent/ca.pem (no such file)' },
    ]);
    const file = pemFile('just text\n');
    const empty = await loadError(withBase('https://api.example.com', `  ca_file: ${file}\n`));
    expect(empty.problems[0]?.message).toBe(`${file} contains no PEM certificate (-----BEGIN CERTIFICATE-----)`);
    const broken = pemFile('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    const bad = await loadError(withBase('https://api.example.com', `  ca_file: ${broken}\n`));
    expect(bad.problems[0]?.message).toBe(`${broken}: certificate 1 of 1 is not valid PEM`);
  });
});

describe('api limits against a hostile server (issue 27, points 2 and 3)', () => {
  it('defaults: Retry-After at most 15 min, 64 MiB per response, 5 min per attempt', async () => {
    const { api } = await load(withBase('https://api.example.com'));
    expect(api).toMatchObject({ max_retry_after: '15m', max_response_bytes: 67_108_864, attempt_deadline_ms: 300_000 });
    expect(maxRetryAfterMs(api)).toBe(900_000);
  });

  it('max_retry_after is a duration', async () => {
    const { api } = await load(withBase('https://api.example.com', '  max_retry_after: 1h30m\n'));
    expect(maxRetryAfterMs(api)).toBe(5_400_000);
  });

  it.each(['0s', '25h', '35d', 'forever'])('refuses max_retry_after: %s with a sentence', async (value) => {
    const error = await loadError(withBase('https://api.example.com', `  max_retry_after: ${value}\n`));
    expect(error.problems).toEqual([expect.objectContaining({ path: 'api.max_retry_after', message: 'expected a duration from 1s to 24h, e.g. 15m, 1h or 90s' })]);
  });

  it.each([['max_response_bytes', 1000], ['attempt_deadline_ms', 10]])('refuses %s: %d', async (key, value) => {
    const error = await loadError(withBase('https://api.example.com', `  ${key}: ${value}\n`));
    expect(error.problems[0]?.path).toBe(`api.${key}`);
  });
});
