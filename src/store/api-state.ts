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
 * A lost write (a crash before the commit, a power cut after a relaxed one) costs at most one early request or one
 * question asked again, never data.
 */
import type { SharedWindow, WaitWindow } from '../api/rate-gate.ts';
import { sqlOf } from './sql-db.ts';
import type { StateDb } from './state-db.ts';

const RETRY_AFTER = 'retry_after';
/** When `pricing-agent api clear-wait` last ended the window: windows recorded before it are over. */
const RETRY_AFTER_CLEARED = 'retry_after_cleared';
const jobKey = (jobId: string) => `job:${jobId}`;

/** Epoch ms before which no request is sent (0: no window recorded). */
export async function rateLimitedUntil(db: StateDb): Promise<number> {
  return (await sqlOf(db).value<number>('SELECT until_ms FROM api_pacing WHERE key = ?', [RETRY_AFTER])) ?? 0;
}

/** Why a window was opened, kept in api_pacing.detail as JSON (older rows have none). */
interface WindowDetail {
  status: number;
  method: string;
  path: string;
  recorded_at_ms: number;
}

function detailOf(text: string | null, updatedAt: string): Omit<WaitWindow, 'untilMs'> {
  try {
    const d = JSON.parse(text ?? '') as Partial<WindowDetail>;
    if (typeof d.status === 'number' && typeof d.method === 'string' && typeof d.path === 'string' && typeof d.recorded_at_ms === 'number') {
      return { status: d.status, method: d.method, path: d.path, recordedAtMs: d.recorded_at_ms };
    }
  } catch {
    // a row written before the reason was kept: a 429, recorded when the row was last updated
  }
  const at = Date.parse(updatedAt);
  return { status: 429, method: '?', path: '?', recordedAtMs: Number.isNaN(at) ? 0 : at };
}

/**
 * The stored window and the last clear-wait, as recorded (the reader bounds the window by api.max_retry_after:
 * rate-gate.ts, status-report.ts).
 */
export async function storedWaitWindow(db: StateDb): Promise<SharedWindow> {
  const rows = await sqlOf(db).all<{ key: string; until_ms: number; detail: string | null; updated_at: string }>(
    'SELECT key, until_ms, detail, updated_at FROM api_pacing WHERE key IN (?, ?)',
    [RETRY_AFTER, RETRY_AFTER_CLEARED],
  );
  const window = rows.find((r) => r.key === RETRY_AFTER);
  return {
    window: window ? { untilMs: window.until_ms, ...detailOf(window.detail, window.updated_at) } : null,
    clearedAtMs: rows.find((r) => r.key === RETRY_AFTER_CLEARED)?.until_ms ?? 0,
  };
}

/**
 * Records a Retry-After window, unless a longer one is recorded already (its reason goes with the longer one). A
 * relaxed commit: the window must be on disk before the process can die (a restart inside the window reads it), and a
 * full one waited for the WAL's sync and, behind a push's relaxed batch commits, for SQLite's checkpoint of a thousand
 * pages or more: a daemon killed in those milliseconds left its successor to send inside the window (found by the
 * chaos suite). A relaxed commit survives the process; only a power cut can lose it, which costs one early request.
 */
export async function recordWaitWindow(db: StateDb, window: WaitWindow): Promise<void> {
  const detail: WindowDetail = { status: window.status, method: window.method, path: window.path, recorded_at_ms: window.recordedAtMs };
  await sqlOf(db).write(
    (tx) =>
      tx.run(
        `INSERT INTO api_pacing (key, until_ms, detail, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET
           detail = CASE WHEN excluded.until_ms > api_pacing.until_ms THEN excluded.detail ELSE api_pacing.detail END,
           until_ms = ${tx.dialect.greatest('api_pacing.until_ms', 'excluded.until_ms')}, updated_at = excluded.updated_at`,
        [RETRY_AFTER, Math.ceil(window.untilMs), JSON.stringify(detail), tx.now],
      ),
    { durability: 'relaxed' },
  );
}

/** A 429 window with no reason given (tests, older callers): see recordWaitWindow. */
export function recordRateLimitedUntil(db: StateDb, untilMs: number): Promise<void> {
  return recordWaitWindow(db, { untilMs, status: 429, method: '?', path: '?', recordedAtMs: Date.now() });
}

/**
 * `pricing-agent api clear-wait`: ends the window for every process of the agent. The window is deleted and the
 * moment of the clear recorded, so that a process that holds the window in memory (the daemon, waiting at its gate)
 * drops it at its next look (rate-gate.ts, every few seconds). A full commit: the user was told it is over.
 * Returns what was stored before.
 */
export async function clearWaitWindow(db: StateDb, nowMs: number): Promise<SharedWindow> {
  const before = await storedWaitWindow(db);
  await sqlOf(db).write(async (tx) => {
    await tx.run('DELETE FROM api_pacing WHERE key = ?', [RETRY_AFTER]);
    await tx.run(
      `INSERT INTO api_pacing (key, until_ms, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET until_ms = excluded.until_ms, updated_at = excluded.updated_at`,
      [RETRY_AFTER_CLEARED, Math.ceil(nowMs), tx.now],
    );
  });
  return before;
}

export interface JobPoll {
  /** Epoch ms of the next poll. */
  untilMs: number;
  /** The job's status at the last poll (as the server named it). */
  status: string | null;
}

/** When job `jobId` may be polled next, or undefined when it was never polled by this agent. */
export async function jobPollOf(db: StateDb, jobId: string): Promise<JobPoll | undefined> {
  const row = await sqlOf(db).get<{ until_ms: number; detail: string | null }>('SELECT until_ms, detail FROM api_pacing WHERE key = ?', [jobKey(jobId)]);
  return row && { untilMs: row.until_ms, status: row.detail };
}

/** Records the next poll of job `jobId` after a poll that found it in `status`. */
export async function recordJobPoll(db: StateDb, jobId: string, status: string, nextPollMs: number): Promise<void> {
  await sqlOf(db).write(
    (tx) =>
      tx.run(
        `INSERT INTO api_pacing (key, until_ms, detail, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET until_ms = excluded.until_ms, detail = excluded.detail, updated_at = excluded.updated_at`,
        [jobKey(jobId), Math.ceil(nextPollMs), status, tx.now],
      ),
    { durability: 'relaxed' },
  );
}

/** Forgets the poll time of a job that ended (completed or failed). */
export async function forgetJobPoll(db: StateDb, jobId: string): Promise<void> {
  await sqlOf(db).write((tx) => tx.run('DELETE FROM api_pacing WHERE key = ?', [jobKey(jobId)]), { durability: 'relaxed' });
}

export const API_FACTS = {
  /** The acknowledge body shape the server accepted (ACK_BODY_SHAPES). */
  ackBodyShape: 'ack_body_shape',
} as const;
export type ApiFact = (typeof API_FACTS)[keyof typeof API_FACTS];

export async function apiFact(db: StateDb, key: ApiFact): Promise<string | undefined> {
  return sqlOf(db).value<string>('SELECT value FROM api_facts WHERE key = ?', [key]);
}

export async function recordApiFact(db: StateDb, key: ApiFact, value: string): Promise<void> {
  await sqlOf(db).write((tx) =>
    tx.run(
      `INSERT INTO api_facts (key, value, learned_at) VALUES (?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value, learned_at = excluded.learned_at`,
      [key, value, tx.now],
    ),
  );
}

export async function forgetApiFact(db: StateDb, key: ApiFact): Promise<void> {
  await sqlOf(db).write((tx) => tx.run('DELETE FROM api_facts WHERE key = ?', [key]));
}

/** The job ids of the latest import uploads, newest first (read-only over push_files, owned by push-ledger.ts). */
export async function recentImportJobIds(db: StateDb, limit: number): Promise<string[]> {
  const rows = await sqlOf(db).all<{ job_id: string }>('SELECT job_id FROM push_files WHERE job_id IS NOT NULL ORDER BY id DESC LIMIT ?', [limit]);
  return rows.map((r) => r.job_id);
}
