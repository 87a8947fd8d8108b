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
  forgetApiFact,
  forgetJobPoll,
  jobPollOf,
  rateLimitedUntil,
  recordApiFact,
  recordJobPoll,
  recordRateLimitedUntil,
} from '../../src/store/api-state.ts';
import { openDatabase } from '../../src/store/open-database.ts';
import { onCleanup, tempDir } from './support.ts';

it('keeps the longest Retry-After window, job poll times and facts, for every connection', async () => {
  const path = join(tempDir(), 'state.db');
  const daemon = await openDatabase(path);
  onCleanup(() => daemon.close());
  const command = await openDatabase(path, { readonly: true });
  onCleanup(() => command.close());

  expect(rateLimitedUntil(command)).toBe(0);
  recordRateLimitedUntil(daemon, 5000.4);
  recordRateLimitedUntil(daemon, 3000); // a shorter window recorded later never opens the gate early
  expect(rateLimitedUntil(command)).toBe(5001);

  expect(jobPollOf(command, 'j-1')).toBeUndefined();
  recordJobPoll(daemon, 'j-1', 'queued', 45_000);
  expect(jobPollOf(command, 'j-1')).toEqual({ untilMs: 45_000, status: 'queued' });
  recordJobPoll(daemon, 'j-1', 'running', 52_000);
  expect(jobPollOf(command, 'j-1')).toEqual({ untilMs: 52_000, status: 'running' });
  forgetJobPoll(daemon, 'j-1');
  expect(jobPollOf(command, 'j-1')).toBeUndefined();

  recordApiFact(daemon, API_FACTS.ackBodyShape, 'ids');
  expect(apiFact(command, API_FACTS.ackBodyShape)).toBe('ids');
  forgetApiFact(daemon, API_FACTS.ackBodyShape);
  expect(apiFact(command, API_FACTS.ackBodyShape)).toBeUndefined();
});
