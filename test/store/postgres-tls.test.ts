/**
 * `state.postgres.sslmode` and `ca_file` against a real TLS PostgreSQL server (docs/postgresql.md, step 2): one
 * cluster with `ssl = on`, a certificate for 127.0.0.1 signed by a private CA made here with openssl, and a
 * pg_hba.conf that takes TCP connections over TLS only. verify-full with the CA connects (encrypted); without the CA
 * it is refused with one sentence naming ca_file; require connects without checking; disable is refused with one
 * sentence naming sslmode. The postgres project only.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { PostgresConfig, SslMode } from '../../src/config/state-schema.ts';
import { StoreError } from '../../src/store/errors.ts';
import { openPostgres } from '../../src/store/postgres/open-postgres.ts';
import { startCluster, type TestCluster } from '../support/postgres-cluster.ts';
import { sqlValue } from '../support/state-sql.ts';
import { TEST_BACKEND } from '../support/state-db.ts';

let dir = '';
let cluster: TestCluster | null = null;

/** A CA, and a server certificate it signed for 127.0.0.1 and localhost (EC keys: made in milliseconds). */
function makeCertificates(): { caFile: string; cert: string; key: string } {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=pricing-agent test CA');
  openssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName = IP:127.0.0.1, DNS:localhost\n');
  openssl(
    'x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '2',
    '-extfile', 'san.ext',
  );
  return { caFile: join(dir, 'ca.crt'), cert: readFileSync(join(dir, 'server.crt'), 'utf8'), key: readFileSync(join(dir, 'server.key'), 'utf8') };
}

let caFile = '';

function config(sslmode: SslMode, ca: string | null): PostgresConfig {
  return {
    url: `postgres://postgres@127.0.0.1:${cluster?.port ?? 0}/postgres`,
    password: null,
    password_file: null,
    schema: 'tls_test',
    sslmode,
    ca_file: ca,
    pool_size: 2,
    connect_timeout_ms: 10_000,
    statement_timeout_ms: 60_000,
  };
}

/** Opens the state with `postgres` and says whether its connection is encrypted. */
async function encrypted(postgres: PostgresConfig): Promise<unknown> {
  const db = await openPostgres(postgres);
  try {
    return await sqlValue(db, 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
  } finally {
    await db.close();
  }
}

/** The error an open fails with. */
async function refused(sslmode: SslMode, ca: string | null): Promise<StoreError> {
  const error = await openPostgres(config(sslmode, ca)).then(
    async (db) => {
      await db.close();
      return new Error('connected');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StoreError);
  return error as StoreError;
}

beforeAll(async () => {
  if (TEST_BACKEND !== 'postgres') return;
  dir = mkdtempSync(join(tmpdir(), 'pa-pg-tls-'));
  const certificates = makeCertificates();
  caFile = certificates.caFile;
  cluster = await startCluster(inject('pgTemplate'), { tls: { cert: certificates.cert, key: certificates.key, only: true } });
});

afterAll(() => {
  cluster?.stop();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe.runIf(TEST_BACKEND === 'postgres')('sslmode against a TLS PostgreSQL server', () => {
  it('verify-full with the private CA in ca_file connects, encrypted', async () => {
    expect(await encrypted(config('verify-full', caFile))).toBe(true);
  });

  it('verify-full without the CA is refused with one sentence that names ca_file', async () => {
    const error = await refused('verify-full', null);
    expect(error.code).toBe('OPEN_FAILED');
    expect(error.message).toMatch(/certificate .*not trusted.*state\.postgres\.ca_file/);
    expect(error.message).not.toContain('\n');
  });

  it('require connects without checking the certificate, encrypted', async () => {
    expect(await encrypted(config('require', null))).toBe(true);
  });

  it('disable against a server that takes TLS only is refused with one sentence that names sslmode', async () => {
    const error = await refused('disable', null);
    expect(error.code).toBe('OPEN_FAILED');
    expect(error.message).toMatch(/accepts only TLS connections.*state\.postgres\.sslmode/);
    expect(error.message).not.toContain('\n');
  });
});
