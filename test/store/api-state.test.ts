/**
 * The shared pacing and facts (src/store/api-state.ts): a Retry-After window only ever grows, job poll times are
 * kept per job until forgotten, facts are remembered and forgotten, and another connection (another process) sees
 * what one wrote.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import {
  API_FACTS,
  apiFact,
  clearWaitWindow,
  forgetApiFact,
  forgetJobPoll,
  jobPollOf,
  rateLimitedUntil,
  recordApiFact,
  recordJobPoll,
  recordRateLimitedUntil,
  recordWaitWindow,
  storedWaitWindow,
} from '../../src/store/api-state.ts';
import { openSqlite as openDatabase } from '../../src/store/sqlite/open-sqlite.ts';
import { openTestDb } from '../support/state-db.ts';
import { onCleanup, tempDir } from './support.ts';

it('keeps the longest Retry-After window, job poll times and facts, for every connection', async () => {
  const path = join(tempDir(), 'state.db');
  const daemon = await openDatabase(path);
  onCleanup(() => daemon.close());
  const command = await openDatabase(path, { readonly: true });
  onCleanup(() => command.close());

  expect(await rateLimitedUntil(command)).toBe(0);
  await recordRateLimitedUntil(daemon, 5000.4);
  await recordRateLimitedUntil(daemon, 3000); // a shorter window recorded later never opens the gate early
  expect(await rateLimitedUntil(command)).toBe(5001);

  expect(await jobPollOf(command, 'j-1')).toBeUndefined();
  await recordJobPoll(daemon, 'j-1', 'queued', 45_000);
  expect(await jobPollOf(command, 'j-1')).toEqual({ untilMs: 45_000, status: 'queued' });
  await recordJobPoll(daemon, 'j-1', 'running', 52_000);
  expect(await jobPollOf(command, 'j-1')).toEqual({ untilMs: 52_000, status: 'running' });
  await forgetJobPoll(daemon, 'j-1');
  expect(await jobPollOf(command, 'j-1')).toBeUndefined();

  await recordApiFact(daemon, API_FACTS.ackBodyShape, 'ids');
  expect(await apiFact(command, API_FACTS.ackBodyShape)).toBe('ids');
  await forgetApiFact(daemon, API_FACTS.ackBodyShape);
  expect(await apiFact(command, API_FACTS.ackBodyShape)).toBeUndefined();
});

it('keeps the reason with the longest window, and a clear-wait ends it for every process (issue 27, point 2)', async () => {
  const dir = tempDir();
  const daemon = await openTestDb(join(dir, 'state'));
  onCleanup(() => daemon.close());
  const command = await openTestDb(join(dir, 'state'), { readonly: true });
  onCleanup(() => command.close());

  expect(await storedWaitWindow(command)).toEqual({ window: null, clearedAtMs: 0 });
  const long = { untilMs: 900_000, status: 429, method: 'GET', path: '/v1/auth/verify', recordedAtMs: 1_000 };
  await recordWaitWindow(daemon, long);
  await recordWaitWindow(daemon, { untilMs: 60_000, status: 503, method: 'POST', path: '/v1/transactions/bulk', recordedAtMs: 2_000 });
  expect(await storedWaitWindow(command)).toEqual({ window: long, clearedAtMs: 0 }); // the shorter one changed nothing

  expect(await clearWaitWindow(daemon, 5_000)).toEqual({ window: long, clearedAtMs: 0 });
  expect(await storedWaitWindow(command)).toEqual({ window: null, clearedAtMs: 5_000 });
  const later = { untilMs: 70_000, status: 429, method: 'GET', path: '/v1/approved_prices', recordedAtMs: 6_000 };
  await recordWaitWindow(daemon, later); // a 429 after the clear opens a new window
  expect(await storedWaitWindow(command)).toEqual({ window: later, clearedAtMs: 5_000 });
});
