/**
 * `state.postgres.sslmode` and `ca_file` against a real TLS PostgreSQL server (docs/postgresql.md, step 2): one
 * cluster with `ssl = on`, a certificate for 127.0.0.1 signed by a private CA made here with openssl, and a
 * pg_hba.conf that takes TCP connections over TLS only. verify-full with the CA connects (encrypted); without the CA
 * it is refused with one sentence naming ca_file; require connects without checking; disable is refused with one
 * sentence naming sslmode. The agent's role logs in with a password (scram-sha-256, as docs/postgresql.md sets it
 * up): the configured password is sent, and a wrong or missing one is one sentence naming password_file. The postgres
 * project only.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { PostgresConfig, SslMode } from '../../src/config/state-schema.ts';
import { StoreError } from '../../src/store/errors.ts';
import { openPostgres } from '../../src/store/postgres/open-postgres.ts';
import { startCluster, type TestCluster } from '../support/postgres-cluster.ts';
import { testCertificates } from '../support/test-ca.ts';
import { sqlValue } from '../support/state-sql.ts';
import { TEST_BACKEND } from '../support/state-db.ts';

let dir = '';
let cluster: TestCluster | null = null;

let caFile = '';

/** The role that logs in with a password (scram-sha-256), as docs/postgresql.md step 1 creates it. */
const AGENT_ROLE = { user: 'pricing_agent', password: 'a-long-password-for-the-test' };

function config(sslmode: SslMode, ca: string | null, login: { user: string; password: string | null } = { user: 'postgres', password: null }): PostgresConfig {
  return {
    url: `postgres://${login.user}@127.0.0.1:${cluster?.port ?? 0}/postgres`,
    password: login.password,
    password_file: null,
    schema: login.user === 'postgres' ? 'tls_test' : 'password_test',
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
async function refused(sslmode: SslMode, ca: string | null, login?: { user: string; password: string | null }): Promise<StoreError> {
  const error = await openPostgres(config(sslmode, ca, login)).then(
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
  const certificates = testCertificates(dir, ['IP:127.0.0.1', 'DNS:localhost']);
  caFile = certificates.caFile;
  // TCP over TLS only; the superuser without a password, the agent's role with one (as a production server asks).
  const hba = ['local all all trust', 'hostssl all postgres 127.0.0.1/32 trust', `hostssl all ${AGENT_ROLE.user} 127.0.0.1/32 scram-sha-256`, ''];
  cluster = await startCluster(inject('pgTemplate'), { tls: { cert: certificates.cert, key: certificates.key }, hba: hba.join('\n') });
  const admin = new pg.Client({ connectionString: cluster.url, ssl: { rejectUnauthorized: false } });
  await admin.connect();
  try {
    await admin.query(`CREATE ROLE ${AGENT_ROLE.user} LOGIN PASSWORD '${AGENT_ROLE.password}'`);
    await admin.query(`GRANT CREATE ON DATABASE postgres TO ${AGENT_ROLE.user}`);
  } finally {
    await admin.end();
  }
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

  it('a role with a password (scram-sha-256): the configured password is sent, over TLS', async () => {
    expect(await encrypted(config('verify-full', caFile, AGENT_ROLE))).toBe(true);
  });

  it('a wrong password, or none where the server asks for one, is refused with one sentence that names password_file', async () => {
    const wrong = await refused('verify-full', caFile, { user: AGENT_ROLE.user, password: 'not-the-password' });
    expect(wrong.message).toMatch(/password authentication failed for user "pricing_agent": check the password in state\.postgres\.password_file/);
    const none = await refused('verify-full', caFile, { user: AGENT_ROLE.user, password: null });
    expect(none.message).toMatch(/the server asks for a password and none is configured: set state\.postgres\.password_file/);
    for (const error of [wrong, none]) expect(error.message).not.toContain('\n');
  });
});
