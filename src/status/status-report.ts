/**
 * The whole of `pricing-agent status`: what the state database says (read-only; safe while the daemon runs, WAL),
 * what the inbox folders hold, and the two live checks (key, daemon) the caller ran. The JSON of `status --json` is
 * this object; its keys are stable snake_case.
 *
 * Judgement (the exit code): not ok when the API rejected the key (401) or a daemon answered that it is not ready.
 * Everything else is shown but does not fail the command: an unreachable API or a stopped daemon may be expected
 * on this host, and a health check should rather pass wrongly than fail wrongly.
 */
import type { Config } from '../config/index.ts';
import { type FeedOverview, feedOverview } from '../feed/consumer-status.ts';
import { isMissingState, openStateDb, stateLocation } from '../store/open-state-db.ts';
import { hasTable } from '../store/meta.ts';
import { haOverview, type HaOverview } from './ha-overview.ts';
import { processingFiles, type ProcessingFile } from '../store/push-ledger-views.ts';
import type { StateDb } from '../store/state-db.ts';
import type { DaemonCheck } from './daemon-probe.ts';
import { apiWaitOf, type ApiWaitView } from './api-wait.ts';
import { inboxOverview, type SourceOverview } from './inbox-overview.ts';
import { heldFileList, type HeldFileView } from './held-files.ts';
import { mirrorOverview, pullOverview, type MirrorOverview, type OutboxOverview, type PullOverview } from './pull-overview.ts';

/** `waiting`: not checked, because a Retry-After window is open (status does not wait for it; `api_wait` says it). */
export const KEY_STATES = ['ok', 'rejected', 'unreachable', 'error', 'skipped', 'waiting'] as const;
export type KeyState = (typeof KEY_STATES)[number];

export interface KeyCheck {
  state: KeyState;
  base_url: string;
  user_id?: string;
  api_key_id?: string;
  /** What is wrong and what to do (never the key). */
  message?: string;
}

export interface DatabaseInfo {
  path: string;
  /** missing: the agent has not run with this state.dir yet; unreadable: see message. */
  state: 'ok' | 'missing' | 'unreadable';
  message?: string;
}

export interface StatusReport {
  generated_at: string;
  state_dir: string;
  database: DatabaseInfo;
  sources: SourceOverview[];
  processing_files: ProcessingFile[];
  /** Files the brakes held, waiting for `files release` (delta push). */
  held_files: HeldFileView[];
  pull: PullOverview | null;
  outbox: OutboxOverview | null;
  mirrors: MirrorOverview[];
  /** The feed's consumers per store: offsets, applied seqs, lag, overdue stores (src/feed/consumer-status.ts). */
  feed: FeedOverview | null;
  /** The HA pair (docs/ha.md): the lease and every node's role; null without HA. */
  ha: HaOverview | null;
  /** The Retry-After window the API gave (until when, why); null when requests may be sent. */
  api_wait: ApiWaitView | null;
  api_key: KeyCheck;
  daemon: DaemonCheck;
  /** False when the key is rejected or the daemon answers "not ready"; `problems` says why. */
  ok: boolean;
  problems: string[];
}

export type DatabaseParts = Pick<StatusReport, 'database' | 'sources' | 'processing_files' | 'held_files' | 'pull' | 'outbox' | 'mirrors' | 'feed' | 'ha' | 'api_wait'>;

async function openReadOnly(config: Config): Promise<{ db: StateDb | null; info: DatabaseInfo }> {
  const path = stateLocation(config.state);
  try {
    return { db: await openStateDb(config.state, { readonly: true }), info: { path, state: 'ok' } };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (isMissingState(error)) return { db: null, info: { path, state: 'missing', message } };
    return { db: null, info: { path, state: 'unreadable', message } };
  }
}

/** Runs `read` on the state database opened read-only; null when there is none yet or it cannot be read. */
export async function withStateDatabase<T>(config: Config, read: (db: StateDb | null) => Promise<T> | T): Promise<T> {
  const { db } = await openReadOnly(config);
  try {
    return await read(db);
  } finally {
    await db?.close();
  }
}

/** Reads the database (if there is one) and the inbox folders. */
export async function gatherDatabaseParts(config: Config, now: Date): Promise<DatabaseParts> {
  const { db, info } = await openReadOnly(config);
  try {
    const ledger = db && (await hasTable(db, 'push_files')) ? db : null;
    const pulled = db ? await pullOverview(db, now) : null;
    return {
      database: info,
      sources: await inboxOverview(config, ledger, now),
      processing_files: ledger ? await processingFiles(ledger) : [],
      held_files: ledger ? await heldFileList(ledger) : [],
      pull: pulled?.pull ?? null,
      outbox: pulled?.outbox ?? null,
      mirrors: db ? await mirrorOverview(db) : [],
      feed: db ? await feedOverview(db, config.feed, now.getTime()) : null,
      ha: db ? await haOverview(db, config) : null,
      api_wait: db ? await apiWaitOf(db, config, now.getTime()) : null,
    };
  } finally {
    await db?.close();
  }
}

/** Why the command exits 1 (empty: exit 0). */
export function problemsOf(key: KeyCheck, daemon: DaemonCheck, sources: readonly SourceOverview[] = []): string[] {
  const problems: string[] = [];
  for (const s of sources) if (s.refused !== null) problems.push(`source ${s.name}: ${s.refused}`);
  if (key.state === 'rejected') problems.push(key.message ?? 'the API rejected the key (401)');
  if (daemon.state === 'not_ready') {
    const why = daemon.reasons.length > 0 ? `: ${daemon.reasons.join('; ')}` : '';
    problems.push(`the daemon at ${daemon.url ?? '?'} is not ready${why}`);
  }
  return problems;
}

export function buildReport(config: Config, now: Date, parts: DatabaseParts, key: KeyCheck, daemon: DaemonCheck): StatusReport {
  const problems = problemsOf(key, daemon, parts.sources);
  return {
    generated_at: now.toISOString(),
    state_dir: config.state.dir,
    ...parts,
    api_key: key,
    daemon,
    ok: problems.length === 0,
    problems,
  };
}
