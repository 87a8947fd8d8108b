/**
 * Regression (found by the chaos suite): the Retry-After window lived only in the process's rate gate, so a daemon
 * restarted inside the window (a crash, SIGKILL, systemd's restart) sent its first request at once, before the
 * moment the API had named. Now the window is kept in the state database (api_pacing, migration 0005), shared by
 * every process of the agent (see also retry-after-holds-for-every-command.test.ts).
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectApi, pacingOf } from '../../src/api-from-config.ts';
import { loadConfig } from '../../src/config/index.ts';
import { createLogger } from '../../src/log.ts';
import { rateLimitedUntil } from '../../src/store/api-state.ts';
import { openSqlite as openDatabase } from '../../src/store/sqlite/open-sqlite.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { until } from '../support/test-logger.ts';

const verifyBody = { ok: true, user_id: '0d6f4a2b-1c3e-4b5a-8f9e-2a1b3c4d5e6f', api_key_id: '1d6f4a2b-1c3e-4b5a-8f9e-2a1b3c4d5e6f' };
let server: Server;
let url = '';
const arrivals: number[] = [];
let limited = true;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      arrivals.push(Date.now());
      if (limited) {
        limited = false;
        res.writeHead(429, { 'retry-after': '30', 'content-type': 'application/json' });
        res.end('{"detail":"rate limited"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(verifyBody));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

it('a new process waits for the Retry-After the previous one was given', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'pa-retry-after-'));
  const configFile = join(dir, 'pricing-agent.yaml');
  await writeFile(configFile, `api:\n  base_url: ${url}\n  key: svc_live_RetryAfterSurvives0000111122223333\n`);
  const logger = createLogger({ level: 'warn', destination: { write: () => undefined } });
  const config = await loadConfig(configFile, {}, { logger });
  const clock = new ManualClock();
  const firstDb = await openDatabase(join(dir, 'state.db'), { now: () => clock.now() });
  const first = connectApi(config.api, logger, { clock, pacing: pacingOf(firstDb, logger) });
  const waiting = first.client.auth.verify();
  await until(() => clock.waiting > 0, 'the first process to wait for Retry-After');
  expect(await rateLimitedUntil(firstDb)).toBe(clock.now() + 30_000);
  await first.close(); // the process dies inside the window
  await firstDb.close();
  waiting.catch(() => undefined);

  const db = await openDatabase(join(dir, 'state.db'), { now: () => clock.now() });
  const second = connectApi(config.api, logger, { clock, pacing: pacingOf(db, logger) });
  try {
    const verified = second.client.auth.verify();
    await until(() => clock.waiting > 1, 'the second process to wait at its gate');
    expect(arrivals).toHaveLength(1);
    await clock.advance(30_000);
    await expect(verified).resolves.toMatchObject({ ok: true });
    expect(arrivals).toHaveLength(2);
  } finally {
    await second.close();
    await db.close();
  }
});
