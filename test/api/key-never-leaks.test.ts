/**
 * The API key must appear in no log line, error message or printed error. A known key is driven through a real
 * config file and a real loopback server across every outcome (success, 401, 422, 5xx after retries, a transport
 * error), every error is logged the way commands and the daemon log them, and the output is searched for the key.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectApi, type ApiConnection } from '../../src/api-from-config.ts';
import { loadConfig } from '../../src/config/index.ts';
import { createLogger } from '../../src/log.ts';
import { ManualClock, drive } from '../support/manual-clock.ts';
import { startScriptedServer, type ScriptedServer } from '../support/scripted-server.ts';

const KEY = 'svc_live_K3y_that_must_never_leak_5f2a9c';
const verify = { ok: true, user_id: '0d6f4a2b-1c3e-4b5a-8f9e-2a1b3c4d5e6f', api_key_id: '1d6f4a2b-1c3e-4b5a-8f9e-2a1b3c4d5e6f' };

let server: ScriptedServer;
let api: ApiConnection;
const clock = new ManualClock();
const captured: string[] = [];

beforeAll(async () => {
  server = await startScriptedServer([
    { reply: 200, body: verify },
    { reply: 401, body: { detail: 'invalid API key' } },
    { reply: 422, body: { detail: [{ loc: ['body', 'items', 0, 'item_id'], msg: 'Field required', type: 'missing' }] } },
    ...Array.from({ length: 5 }, () => ({ reply: 503, body: { detail: 'unavailable' } })),
    ...Array.from({ length: 5 }, () => ({ reset: true as const })),
  ]);
  const dir = await mkdtemp(join(tmpdir(), 'pa-keyleak-'));
  const configFile = join(dir, 'pricing-agent.yaml');
  await writeFile(configFile, `api:\n  base_url: ${server.url}\n  key: \${PRICING_API_KEY}\nstate:\n  dir: ${dir}/state\nlog:\n  level: trace\n`);
  const config = await loadConfig(configFile, { PRICING_API_KEY: KEY });
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      captured.push(chunk.toString());
      done();
    },
  });
  const logger = createLogger({ level: 'trace', destination: sink });
  api = connectApi(config.api, logger, { clock });
  const outcomes: unknown[] = [];
  const attempt = async (call: () => Promise<unknown>) => {
    try {
      outcomes.push(await drive(clock, call()));
    } catch (error) {
      outcomes.push(error);
      logger.error({ err: error }, 'request failed');
      captured.push(String(error), (error as Error).message, inspect(error, { depth: 10 }));
    }
  };
  await attempt(() => api.client.auth.verify());
  await attempt(() => api.client.auth.verify());
  await attempt(() => api.client.products.bulk([{ item_id: 'A', sku: 'A' }]));
  await attempt(() => api.client.products.bulk([{ item_id: 'A', sku: 'A' }]));
  await attempt(() => api.client.products.bulk([{ item_id: 'A', sku: 'A' }]));
  logger.info({ config }, 'loaded config'); // even a careless dump of the whole config
  expect(outcomes.map((o) => (o instanceof Error ? (o as { code?: string }).code : 'ok'))).toEqual([
    'ok',
    'API_KEY_REJECTED',
    'API_VALIDATION_FAILED',
    'API_SERVER_ERROR',
    'API_TRANSPORT_ERROR',
  ]);
});

afterAll(async () => {
  await api.close();
  await server.close();
});

describe('the API key', () => {
  it('was really sent to the server', () => {
    expect(server.received.length).toBeGreaterThanOrEqual(13);
    expect(server.received.every((r) => r.headers.authorization === `Bearer ${KEY}`)).toBe(true);
  });

  it('appears nowhere in the logs or error output', () => {
    const output = captured.join('\n');
    expect(output.length).toBeGreaterThan(1000);
    expect(output).toContain('API_KEY_REJECTED');
    expect(output).not.toContain(KEY);
    expect(output).not.toContain(KEY.slice('svc_live_'.length));
  });
});
