/**
 * Regression (issue 11, failure 8): after a restart the agent polled a queued import job at once, though the
 * document recommends 30-60 s between polls while queued. The time of the next poll is now kept in the state
 * database: a restarted agent waits for it. One ManualClock for the sandbox and both agents; no real sleep.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent } from 'undici';
import { expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { JOB_POLL_QUEUED_MS } from '../../src/api/schemas/index.ts';
import { processClaimed, pushFile } from '../../src/ingest/file/push-file.ts';
import { jobPollOf } from '../../src/store/api-state.ts';
import { openTestDb } from '../support/state-db.ts';
import { sqlValue } from '../support/state-sql.ts';
import { getFile } from '../../src/store/push-ledger.ts';
import { ManualClock, drive } from '../support/manual-clock.ts';
import { usePushHarness } from '../support/push-harness.ts';
import { reportOf } from '../fixtures/push/push-report.ts';

const clock = new ManualClock();
// The job stays queued for 10 minutes of the shared clock.
const { h } = usePushHarness({ clock, sandbox: { clock, jobPace: { queuedMs: 600_000, tickMs: 1_000, rowsPerTick: 100 } } });

it('a restarted agent polls a queued job when its next poll is due, not at once', async () => {
  const source = await h.source('transactions', { mode: 'import' });
  const path = join(source.inbox, 'queued.csv');
  await writeFile(path, 'transaction_id,item_id,transaction_timestamp\nQ-1,I-1,2026-11-20T08:00:00Z\nQ-2,I-2,2026-11-20T08:00:00Z\n');
  const stop = new AbortController();
  const first = pushFile({ ...h.deps, signal: stop.signal }, source, path);
  // The first agent uploaded, found the job queued, and waits for its next poll (the sandbox holds the job).
  await clock.untilWaiting(2);
  const fileId = (await sqlValue<number>(h.db, 'SELECT max(id) FROM push_files')) ?? 0;
  const jobId = (await getFile(h.db, fileId))?.job_id ?? '';
  expect(jobId).toMatch(/^[0-9a-f-]{36}$/);
  const due = await jobPollOf(h.db, jobId);
  expect(due?.status).toBe('queued');
  const wait = (due?.untilMs ?? 0) - clock.now();
  expect(wait).toBeGreaterThanOrEqual(JOB_POLL_QUEUED_MS.min);
  expect(wait).toBeLessThanOrEqual(JOB_POLL_QUEUED_MS.max);
  // It is stopped there; the file waits in processing/ with its job id.
  stop.abort();
  expect((await first).outcome).toBe('deferred');

  // The restarted agent: a new connection to the state database and a new client that counts its polls.
  const db = await openTestDb(h.dir); // the harness's state, on this run's backend
  const dispatcher = new Agent({ allowH2: false, connections: 2 });
  let polls = 0;
  const onResponse = (e: { operation: string }) => {
    if (e.operation === 'jobs.get') polls += 1;
  };
  const client = new ApiClient({ baseUrl: h.sandbox.url, apiKey: h.sandbox.apiKey, dispatcher, clock, hooks: { onResponse } });
  try {
    const resumed = processClaimed({ ...h.deps, db, client }, source, fileId);
    await clock.untilWaiting(2); // the sandbox's job and the restarted agent
    expect(polls).toBe(0);
    await clock.advance(wait - 1);
    expect(polls).toBe(0);
    await clock.advance(1);
    await until(() => polls === 1);
    const report = await reportOf(await drive(clock, resumed));
    expect(report.job_id).toBe(jobId);
    expect(report.rows).toMatchObject({ read: 2, accepted: 2 });
    expect(await jobPollOf(db, jobId)).toBeUndefined(); // forgotten once the job ended
  } finally {
    await db.close();
    await dispatcher.close();
  }
});

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setImmediate(r));
  }
}
