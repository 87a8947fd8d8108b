/**
 * A printable view of a Config (`pricing-agent config print`, diagnostics): the same shape with every secret
 * replaced by "***". Add new secret-bearing fields here when a section introduces one.
 */
import type { Config } from './schema.ts';

export const MASK = '***';

/** A proxy URL with its password masked (the user name stays: it helps to tell accounts apart). */
function maskUrlPassword(value: string): string {
  const url = new URL(value);
  if (url.password === '') return value;
  url.password = MASK;
  return url.toString();
}

/** A copy of `config` (not frozen) with the API key, the PostgreSQL password and any proxy password replaced by "***". */
export function redactConfig(config: Config): Config {
  const postgres = config.state.postgres;
  return {
    ...config,
    state: { ...config.state, postgres: postgres === null ? null : { ...postgres, password: postgres.password === null ? null : MASK } },
    api: {
      ...config.api,
      key: MASK,
      proxy: config.api.proxy === null ? null : maskUrlPassword(config.api.proxy),
    },
  };
}
