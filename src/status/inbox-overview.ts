/**
 * Per source, at a glance: files waiting in the inbox, files in processing/ (and which of them wait for a retry),
 * and what finished today. Reads the inbox folder and the push ledger; writes nothing.
 *
 * "Waiting" is what the watcher would take: names matching the source's pattern, without temporary names, dot-files
 * or done markers (the same rules as src/ingest/watch/file-name-rules.ts). "Today" is the local date of this host,
 * like the archive/<date>/ folders.
 */
import { readdir, stat } from 'node:fs/promises';
import { agentUid, inboxFoldersProblem } from '../ingest/inbox-file.ts';
import type { Config } from '../config/index.ts';
import { isDataFile, nameRules } from '../ingest/watch/file-name-rules.ts';
import { lastFileOf, ledgerCounts, type LedgerCounts } from '../store/push-ledger-views.ts';
import type { StateDb } from '../store/state-db.ts';

export type { ProcessingFile } from '../store/push-ledger-views.ts';

export interface LastFile {
  id: number;
  name: string;
  status: string;
  at: string;
  /** A corrected rejects CSV: the id of the file whose rejects it fixes. */
  fixes_file_id: number | null;
}

/** An inbox as `status` shows it: the ledger's counts of its source (LedgerCounts), and what status adds. */
export interface SourceOverview
  extends Pick<LedgerCounts, 'processing' | 'deferred' | 'next_retry_at' | 'done_today' | 'failed_today' | 'duplicate_today'> {
  name: string;
  entity: string;
  /** False for ledger sources not (or no longer) in the config, e.g. `cli:products` of `push --entity`. */
  configured: boolean;
  inbox: string;
  /** Data files in the inbox; null when the folder is missing (or not a configured source). */
  waiting: number | null;
  rows_accepted_today: number;
  rows_rejected_today: number;
  /** Till lines added up into another line of their sale today (duplicate_keys: sum): not lost, not rejected. */
  rows_merged_today: number;
  last_file: LastFile | null;
  /** Why the daemon will not work in this inbox (its folders are not the agent's own: inbox-file.ts), or null. */
  refused: string | null;
}

/**
 * The user the agent runs as, seen from whoever runs `status` (root, a person): the owner of the state directory,
 * which the agent created; this process's own user while there is none.
 */
async function agentUser(config: Config): Promise<number | undefined> {
  return (await stat(config.state.dir).catch(() => null))?.uid ?? agentUid();
}

/** Start and end (exclusive) of the local day of `now`, as ISO UTC instants: comparable with the ledger's text. */
export function localDayBounds(now: Date): { start: string; end: string } {
  const start = new Date(now.getFullYear(), now.getMonth(), now.getDate());
  const end = new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1);
  return { start: start.toISOString(), end: end.toISOString() };
}

/** Data files waiting in `dir`; null when the folder cannot be read. */
export async function countWaiting(dir: string, pattern: string, doneMarker: string | false): Promise<number | null> {
  const rules = nameRules(pattern, doneMarker === false ? null : doneMarker);
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((e) => (e.isFile() || e.isSymbolicLink()) && isDataFile(e.name, rules)).length;
  } catch {
    return null;
  }
}

/**
 * Every configured source (in config order), then ledger sources that are not configured but have files in
 * processing/ or finished today. `db` null: no state database yet (only the inbox folders are read).
 */
export async function inboxOverview(config: Config, db: StateDb | null, now: Date): Promise<SourceOverview[]> {
  const { start, end } = localDayBounds(now);
  const counts: LedgerCounts[] = db ? await ledgerCounts(db, start, end) : [];
  const last = async (name: string): Promise<LastFile | null> => {
    const row = db ? await lastFileOf(db, name) : undefined;
    return row ? { id: row.id, name: row.original_name, status: row.status, at: row.finished_at ?? row.claimed_at, fixes_file_id: row.fixes_file_id } : null;
  };
  const bySource = new Map(counts.map((c) => [c.source, c]));
  const out: SourceOverview[] = [];
  const uid = await agentUser(config);
  const row = async (name: string, entity: string, inbox: string, configured: boolean, waiting: number | null): Promise<SourceOverview> => {
    const c = bySource.get(name);
    return {
      name,
      entity,
      configured,
      inbox,
      waiting,
      processing: c?.processing ?? 0,
      deferred: c?.deferred ?? 0,
      next_retry_at: c?.next_retry_at ?? null,
      done_today: c?.done_today ?? 0,
      failed_today: c?.failed_today ?? 0,
      duplicate_today: c?.duplicate_today ?? 0,
      rows_accepted_today: c?.rows_accepted_today ?? 0,
      rows_rejected_today: c?.rows_rejected_today ?? 0,
      rows_merged_today: c?.rows_merged_today ?? 0,
      last_file: c ? await last(name) : null,
      refused: configured ? await inboxFoldersProblem(inbox, uid) : null,
    };
  };
  for (const source of config.sources) {
    const waiting = await countWaiting(source.path, source.pattern, source.done_marker);
    out.push(await row(source.name, source.entity, source.path, true, waiting));
  }
  const configured = new Set(config.sources.map((s) => s.name));
  for (const c of counts) {
    if (configured.has(c.source)) continue;
    if (c.processing + c.done_today + c.failed_today + c.duplicate_today === 0) continue;
    out.push(await row(c.source, c.entity, c.inbox, false, null));
  }
  return out;
}
