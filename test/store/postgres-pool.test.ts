/**
 * Where the pool connects, from `state.postgres.url`: pg's own parse of a connection string would replace the
 * configured password with the URL's empty one (postgres-tls.test.ts shows a server refusing that), so the pool reads
 * the URL itself; it must read it as libpq does.
 */
import { describe, expect, it } from 'vitest';
import type { PostgresConfig } from '../../src/config/state-schema.ts';
import { connectionFields } from '../../src/store/postgres/pool.ts';

function config(url: string, password: string | null = 'secret'): PostgresConfig {
  return {
    url,
    password,
    password_file: null,
    schema: 'pricing_agent',
    sslmode: 'verify-full',
    ca_file: null,
    pool_size: 10,
    connect_timeout_ms: 10_000,
    statement_timeout_ms: 60_000,
  };
}

describe('connectionFields', () => {
  it('takes host, port, database and user from the URL, and the password from the config', () => {
    expect(connectionFields(config('postgres://pricing_agent@db.example.internal:5433/pricing'))).toEqual({
      host: 'db.example.internal',
      port: 5433,
      database: 'pricing',
      user: 'pricing_agent',
      password: 'secret',
    });
  });

  it('reads the default port, an IPv6 address, a Unix socket folder and encoded names as libpq does', () => {
    expect(connectionFields(config('postgresql://db.example/pricing', null))).toEqual({ host: 'db.example', port: 5432, database: 'pricing' });
    expect(connectionFields(config('postgres://agent@[::1]:5432/pricing')).host).toBe('::1');
    expect(connectionFields(config('postgres://agent@%2Fvar%2Frun%2Fpostgresql/pricing')).host).toBe('/var/run/postgresql');
    expect(connectionFields(config('postgres://pricing%40agent@db/price%20data'))).toMatchObject({ user: 'pricing@agent', database: 'price data' });
  });
});
