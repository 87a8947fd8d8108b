/** Shared helpers of the config tests: real files in a temp directory, a captured logger. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirForTest } from '../support/after-test.ts';
import { ConfigError, loadConfig } from '../../src/config/index.ts';
import type { Config, Env } from '../../src/config/index.ts';
import { createLogger } from '../../src/log.ts';

export const KEY = 'svc_live_TestKey0000111122223333';

/** The `pull:` section of a config that sets none of it. */
export const PULL_DEFAULTS: Config['pull'] = {
  approved_prices: {
    schedule: '* * * * *',
    filters: {},
    page_size: 500,
    reconcile: { schedule: '17 * * * *', lookback_days: 90 },
  },
  mirrors: [],
};

/** A fresh temp directory, removed after the test. */
export function tempDir(): string {
  return tempDirForTest('pricing-agent-config-');
}

/** Writes `text` to `name` in a fresh temp directory and returns the file's path. */
export function writeConfig(text: string, name = 'pricing-agent.yaml', dir = tempDir()): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** A minimal valid `api:` section, to prepend to what a test is about. */
export const API = 'api:\n  base_url: https://api.example.com\n  key: ${PRICING_API_KEY}\n';

/** A logger whose lines are kept for inspection. */
export function capturedLogger() {
  const lines: string[] = [];
  const logger = createLogger({ level: 'trace', destination: { write: (line: string) => void lines.push(line) } });
  return { logger, lines, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

/** Loads `text` as a config file with `env` (PRICING_API_KEY set unless overridden). */
export async function load(text: string, env: Env = {}): Promise<Config> {
  return loadConfig(writeConfig(text), { PRICING_API_KEY: KEY, ...env }, { logger: capturedLogger().logger });
}

/** The ConfigError thrown by loading `text`; fails the test when loading succeeds or throws something else. */
export async function loadError(text: string, env: Env = {}): Promise<ConfigError> {
  const error = await load(text, env).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ConfigError)) throw new Error(`expected a ConfigError, got ${String(error)}`);
  return error;
}
