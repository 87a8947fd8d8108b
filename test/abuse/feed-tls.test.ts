/**
 * Issue 27, point 12: the feed's TLS. Someone on the store network who records the traffic today and gets the
 * agent's key tomorrow must not read the tokens and prices of today: on TLS 1.2 only ECDHE key exchange is offered
 * (forward secrecy), at start and after a reload. And a key file any local user can read is warned about when the
 * config is loaded, as a token file is.
 *
 * The listener gets an RSA certificate: with an EC one, the RSA key exchange Node allows by default could not be
 * negotiated anyway, so the test would prove nothing.
 */
import { chmodSync, copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { API, capturedLogger, KEY, tempDir, writeConfig } from '../config/support.ts';
import { testCertificates } from '../support/test-ca.ts';
import { feedConfig, feedHarness, STORE_A, testConsumer, TLS } from '../feed/support.ts';

const pos = testConsumer('pos', [STORE_A]);

/** The cipher the handshake agreed on, or the handshake's error. */
function handshake(url: string, options: ConnectionOptions): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    const socket = tlsConnect({ host: '127.0.0.1', port: Number(port), rejectUnauthorized: false, ...options }, () => {
      resolve(socket.getCipher().name);
      socket.destroy();
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(`refused: ${error.code ?? error.message}`));
  });
}

function rsaPair(): { cert_file: string; key_file: string } {
  const dir = tempDir();
  const { cert, key } = testCertificates(dir, ['IP:127.0.0.1'], { serverKey: 'rsa' });
  writeFileSync(join(dir, 'feed.crt'), cert);
  writeFileSync(join(dir, 'feed.key'), key, { mode: 0o600 });
  return { cert_file: join(dir, 'feed.crt'), key_file: join(dir, 'feed.key') };
}

describe('feed TLS', () => {
  it('offers only ECDHE key exchange on TLS 1.2, at start and after a reload', async () => {
    const tls = rsaPair();
    const h = await feedHarness('https', [pos], { config: { tls } });
    const tls12 = { maxVersion: 'TLSv1.2' } as const;
    const check = async () => {
      expect(await handshake(h.url, { ...tls12, ciphers: 'AES128-GCM-SHA256:AES256-GCM-SHA384:AES128-SHA256' })).toMatch(/^refused: /);
      expect(await handshake(h.url, { ...tls12, ciphers: 'ECDHE-RSA-AES128-GCM-SHA256' })).toBe('ECDHE-RSA-AES128-GCM-SHA256');
      expect(await handshake(h.url, tls12)).toMatch(/^ECDHE-RSA-/); // a client offering everything gets ECDHE
      expect(await handshake(h.url, { minVersion: 'TLSv1.3' })).toMatch(/^TLS_/);
      expect(await handshake(h.url, { maxVersion: 'TLSv1.1', minVersion: 'TLSv1' })).toMatch(/^refused: /);
    };
    await check();
    await h.server.reconfigure(feedConfig('https', [pos], { tls: rsaPair() }));
    await check();
  });

  it('warns when every local user can read the TLS key file, not when only its group can', async () => {
    const warnings = async (mode: number) => {
      const dir = tempDir();
      copyFileSync(TLS.cert_file, join(dir, 'feed.crt'));
      copyFileSync(TLS.key_file, join(dir, 'feed.key'));
      chmodSync(join(dir, 'feed.key'), mode);
      const yaml = `${API}feed:\n  listen: 127.0.0.1:9465\n  tls:\n    cert_file: ./feed.crt\n    key_file: ./feed.key\n`;
      const { logger, records } = capturedLogger();
      await loadConfig(writeConfig(yaml, 'pricing-agent.yaml', dir), { PRICING_API_KEY: KEY }, { logger });
      return records().map((r) => [r['setting'], r['msg']]);
    };
    expect(await warnings(0o644)).toEqual([
      ['feed.tls.key_file', expect.stringMatching(/the TLS key file .*feed\.key is accessible by every local user \(mode 0644\).*chmod 600/) as unknown],
    ]);
    expect(await warnings(0o604)).toHaveLength(1);
    expect(await warnings(0o640)).toEqual([]);
    expect(await warnings(0o600)).toEqual([]);
  });
});
