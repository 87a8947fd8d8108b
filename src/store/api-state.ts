/**
 * What the agent learned about the API and how it must pace itself, shared by every process on this state
 * directory: the daemon, a one-shot `pull` or `check` beside it, the agent after a restart. Owner of api_pacing and
 * api_facts (migration 0005_api_state).
 *
 * - The Retry-After window: the API limits per key, and the key is the account's, so a window one process was given
 *   holds for all of them. It only ever grows: a shorter window recorded later never opens the gate early.
 * - Job poll times: when an import job may be polled next (the document: every 5-10 s while running, 30-60 s
 *   while queued), so that a restart does not poll a queued job at once.
 * - Facts: the server's answer to a question the document leaves open (which acknowledge body it takes), so that
 *   the next run does not ask again.
 *
 * A lost write (a crash before the commit) costs at most one early request or one question asked again, never data.
 */
import type { StateDb } from './state-db.ts';

const RETRY_AFTER = 'retry_after';
const jobKey = (jobId: string) => `job:${jobId}`;

/** Epoch ms before which no request is sent (0: no window recorded). */
export function rateLimitedUntil(db: StateDb): number {
  return db.statement<number>('SELECT until_ms FROM api_pacing WHERE key = ?').pluck().get(RETRY_AFTER) ?? 0;
}

/** Records a Retry-After window ending at `untilMs`, unless a longer one is recorded already. */
export function recordRateLimitedUntil(db: StateDb, untilMs: number): void {
  db.write(() =>
    db
      .statement(
        `INSERT INTO api_pacing (key, until_ms, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET until_ms = max(until_ms, excluded.until_ms), updated_at = excluded.updated_at`,
      )
      .run(RETRY_AFTER, Math.ceil(untilMs), db.now()),
  );
}

export interface JobPoll {
  /** Epoch ms of the next poll. */
  untilMs: number;
  /** The job's status at the last poll (as the server named it). */
  status: string | null;
}

/** When job `jobId` may be polled next, or undefined when it was never polled by this agent. */
export function jobPollOf(db: StateDb, jobId: string): JobPoll | undefined {
  const row = db.statement<{ until_ms: number; detail: string | null }>('SELECT until_ms, detail FROM api_pacing WHERE key = ?').get(jobKey(jobId));
  return row && { untilMs: row.until_ms, status: row.detail };
}

/** Records the next poll of job `jobId` after a poll that found it in `status`. */
export function recordJobPoll(db: StateDb, jobId: string, status: string, nextPollMs: number): void {
  db.write(
    () =>
      db
        .statement(
          `INSERT INTO api_pacing (key, until_ms, detail, updated_at) VALUES (?, ?, ?, ?)
           ON CONFLICT (key) DO UPDATE SET until_ms = excluded.until_ms, detail = excluded.detail, updated_at = excluded.updated_at`,
        )
        .run(jobKey(jobId), Math.ceil(nextPollMs), status, db.now()),
    { durability: 'relaxed' },
  );
}

/** Forgets the poll time of a job that ended (completed or failed). */
export function forgetJobPoll(db: StateDb, jobId: string): void {
  db.write(() => db.statement('DELETE FROM api_pacing WHERE key = ?').run(jobKey(jobId)), { durability: 'relaxed' });
}

export const API_FACTS = {
  /** The acknowledge body shape the server accepted (ACK_BODY_SHAPES). */
  ackBodyShape: 'ack_body_shape',
} as const;
export type ApiFact = (typeof API_FACTS)[keyof typeof API_FACTS];

export function apiFact(db: StateDb, key: ApiFact): string | undefined {
  return db.statement<string>('SELECT value FROM api_facts WHERE key = ?').pluck().get(key);
}

export function recordApiFact(db: StateDb, key: ApiFact, value: string): void {
  db.write(() =>
    db
      .statement(
        `INSERT INTO api_facts (key, value, learned_at) VALUES (?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, learned_at = excluded.learned_at`,
      )
      .run(key, value, db.now()),
  );
}

export function forgetApiFact(db: StateDb, key: ApiFact): void {
  db.write(() => db.statement('DELETE FROM api_facts WHERE key = ?').run(key));
}

/** The job ids of the latest import uploads, newest first (read-only over push_files, owned by push-ledger.ts). */
export function recentImportJobIds(db: StateDb, limit: number): string[] {
  return db
    .statement<string>('SELECT job_id FROM push_files WHERE job_id IS NOT NULL ORDER BY id DESC LIMIT ?')
    .pluck()
    .all(limit);
}
