/**
 * Regression (found by the chaos suite): the Retry-After window lived only in the process's rate gate, so a daemon
 * restarted inside the window (a crash, SIGKILL, systemd's restart) sent its first request at once, before the
 * moment the API had named. Now the window is kept in the state database (api_pacing, migration 0005), shared by
 * every process of the agent (see also retry-after-holds-for-every-command.test.ts).
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { connectApi, pacingOf } from '../../src/api-from-config.ts';
import { loadConfig } from '../../src/config/index.ts';
import { createLogger } from '../../src/log.ts';
import { rateLimitedUntil } from '../../src/store/api-state.ts';
import { openSqlite as openDatabase } from '../../src/store/sqlite/open-sqlite.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { openForFile } from '../support/open-for-file.ts';
import { rateLimited, startScriptedServer, VERIFY_BODY } from '../support/scripted-server.ts';
import { until } from '../support/test-logger.ts';

const server = openForFile(() => startScriptedServer([rateLimited(30), { reply: 200, body: VERIFY_BODY }]));

it('a new process waits for the Retry-After the previous one was given', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'pa-retry-after-'));
  const configFile = join(dir, 'pricing-agent.yaml');
  await writeFile(configFile, `api:\n  base_url: ${server.url}\n  key: svc_live_RetryAfterSurvives0000111122223333\n`);
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
    expect(server.received).toHaveLength(1);
    await clock.advance(30_000);
    await expect(verified).resolves.toMatchObject({ ok: true });
    expect(server.received).toHaveLength(2);
  } finally {
    await second.close();
    await db.close();
  }
});
