/**
 * The `state.backend` and `state.postgres` sections (docs/postgresql.md): the password never in the URL, from a file
 * or the environment and never shown again; libpq's sslmode names with a default by host; one sentence per mistake.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { redactConfig } from '../../src/config/redact.ts';
import { API, load, loadError, tempDir } from './support.ts';

const pg = (lines: string) => `${API}state:\n  backend: postgres\n  postgres:\n${lines}`;

describe('state.postgres', () => {
  it('reads the password from password_file, never shows it, and picks sslmode by host', async () => {
    const file = join(tempDir(), 'pg-password');
    writeFileSync(file, 'S3cret-pg-pass\n', { mode: 0o600 });
    const config = await load(pg(`    url: postgres://pricing_agent@db.example.internal:5432/pricing\n    password_file: ${file}\n`));
    expect(config.state).toMatchObject({ backend: 'postgres' });
    expect(config.state.postgres).toMatchObject({
      url: 'postgres://pricing_agent@db.example.internal:5432/pricing',
      password: 'S3cret-pg-pass',
      password_file: file,
      schema: 'pricing_agent',
      sslmode: 'verify-full',
    });
    expect(JSON.stringify(redactConfig(config))).not.toContain('S3cret-pg-pass');
    const local = await load(pg(`    url: postgres://pricing_agent@127.0.0.1:5432/pricing\n    password: "\${PG_PASSWORD}"\n`), { PG_PASSWORD: 'from-env' });
    expect(local.state.postgres).toMatchObject({ password: 'from-env', sslmode: 'disable' });
    const socket = await load(pg(`    url: postgres://pricing_agent@%2Fvar%2Frun%2Fpostgresql/pricing\n`));
    expect(socket.state.postgres).toMatchObject({ password: null, sslmode: 'disable' }); // peer authentication: no TLS on a socket
  });

  it('says what is wrong in one sentence each', async () => {
    const problem = async (text: string, env = {}) => (await loadError(text, env)).problems.map((p) => `${p.path}: ${p.message}`).join('\n');
    expect(await problem(pg(`    url: postgres://pricing_agent:secret@db.example/pricing\n`))).toContain(
      'state.postgres.url must not contain the password: put it in state.postgres.password_file or password',
    );
    expect(await problem(`${API}state:\n  backend: postgres\n`)).toContain('state.backend is postgres: set state.postgres.url (and its password)');
    expect(await problem(pg(`    url: postgres://a@db.example/pricing\n    password: x\n    password_file: /nonexistent\n`))).toMatch(
      /cannot read the PostgreSQL password file \/nonexistent \(no such file\)|set either state.postgres.password or password_file, not both/,
    );
    expect(await problem(pg(`    url: postgres://a@db.example/pricing\n    sslmode: require\n    ca_file: /nonexistent.pem\n`))).toMatch(/ca_file/);
    expect(await problem(pg(`    url: postgres://a@db.example/pricing\n    sslmode: prefer\n`))).toContain('state.postgres.sslmode');
    expect(await problem(pg(`    url: postgres://a@db.example/pricing\n    schema: Pricing-Agent\n`))).toContain('a schema name of lower-case letters');
  });
});
