/**
 * A private CA made with openssl for a test, and a server certificate it signed (EC keys by default: made in
 * milliseconds).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TestCertificates {
  /** The CA's certificate (PEM file), for `ca_file`. */
  readonly caFile: string;
  /** The server's certificate and key (PEM). */
  readonly cert: string;
  readonly key: string;
}

/**
 * In `dir`: a CA and a certificate for `names` (subject alternative names: `IP:...` or `DNS:...`, the first is the
 * CN). `serverKey: 'rsa'` gives the server an RSA key (2048 bits), for the cipher suites only an RSA key can use.
 */
export function testCertificates(dir: string, names: readonly string[], options: { serverKey?: 'ec' | 'rsa' } = {}): TestCertificates {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=pricing-agent test CA');
  const commonName = (names[0] ?? 'localhost').replace(/^(IP|DNS):/, '');
  const serverKey = options.serverKey === 'rsa' ? ['-newkey', 'rsa:2048', '-nodes'] : ec;
  openssl('req', ...serverKey, '-keyout', 'server.key', '-out', 'server.csr', '-subj', `/CN=${commonName}`);
  writeFileSync(join(dir, 'san.ext'), `subjectAltName = ${names.join(', ')}\n`);
  openssl(
    'x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '2',
    '-extfile', 'san.ext',
  );
  return { caFile: join(dir, 'ca.crt'), cert: readFileSync(join(dir, 'server.crt'), 'utf8'), key: readFileSync(join(dir, 'server.key'), 'utf8') };
}
