/**
 * The push ledger for people: a filtered list of files, and one file in detail (its row, its counts, where it and its
 * report are now, its first rejects). Reads only; push_files belongs to src/store/push-ledger.ts.
 */
import { stat } from 'node:fs/promises';
import {
  batchesOf,
  fileCounts,
  getFile,
  PUSH_STATUSES,
  rejectsOf,
  UNFINISHED_STATUSES,
  type FileCounts,
  type PushFile,
  type StoredBatch,
  type StoredReject,
} from '../store/push-ledger.ts';
import type { StateDb } from '../store/state-db.ts';

/** `--status` values: a ledger status, or `processing` for every status of a file still in processing/. */
export const FILE_STATUS_FILTERS = [...PUSH_STATUSES, 'processing'] as const;
export type FileStatusFilter = (typeof FILE_STATUS_FILTERS)[number];

export const DEFAULT_LIST_LIMIT = 50;
export const SHOW_FIRST_REJECTS = 10;
/** Batches listed in a file's history (the counts cover all of them). */
export const SHOW_BATCHES = 100;

export interface FileListItem {
  id: number;
  source: string;
  entity: string;
  name: string;
  status: string;
  rows_read: number | null;
  rows_accepted: number | null;
  rows_rejected: number | null;
  rows_superseded: number | null;
  /** Rows not sent because the platform already holds them (0 until delta push). */
  rows_unchanged: number | null;
  /** Rows `skip_rows` skipped. */
  rows_skipped: number | null;
  claimed_at: string;
  finished_at: string | null;
  error_code: string | null;
  next_attempt_at: string | null;
  /** Where the file went when it left processing/ (its report and rejects are beside it). */
  final_path: string | null;
}

export interface ListFilter {
  readonly source?: string;
  readonly status?: FileStatusFilter;
  readonly limit?: number;
}

/** The newest files first. */
export function listFiles(db: StateDb, filter: ListFilter = {}): FileListItem[] {
  const where: string[] = [];
  const params: (string | number)[] = [];
  if (filter.source !== undefined) {
    where.push('source = ?');
    params.push(filter.source);
  }
  if (filter.status !== undefined) {
    const statuses = filter.status === 'processing' ? UNFINISHED_STATUSES : [filter.status];
    where.push(`status IN (${statuses.map(() => '?').join(', ')})`);
    params.push(...statuses);
  }
  const sql = `SELECT id, source, entity, original_name AS name, status, rows_read, rows_accepted, rows_rejected,
      rows_superseded, rows_unchanged, rows_skipped, claimed_at, finished_at, error_code, next_attempt_at, final_path FROM push_files ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
    ORDER BY id DESC LIMIT ?`;
  return db.statement<FileListItem>(sql).all(...params, filter.limit ?? DEFAULT_LIST_LIMIT);
}

export interface FileDetail {
  file: PushFile;
  counts: FileCounts;
  /** Where the file is now: processing/, archive/ or failed/; null when it is no longer there (retried, moved). */
  location: string | null;
  report_path: string | null;
  rejects_path: string | null;
  /** Rows the agent did not write (rejected locally or refused by the API), the first SHOW_FIRST_REJECTS by line. */
  first_rejects: StoredReject[];
  rejects_total: number;
  /** The first SHOW_BATCHES committed batches (counts.batches says how many there are). */
  batches: StoredBatch[];
  duplicate_of: { id: number; name: string; finished_at: string | null; path: string | null } | null;
}

async function existing(path: string | null): Promise<string | null> {
  if (path === null || path === '') return null;
  return stat(path).then(() => path, () => null);
}

/** The report and rejects beside a file that left processing/, where they exist. */
export async function reportFiles(finalPath: string | null): Promise<{ report_path: string | null; rejects_path: string | null }> {
  if (finalPath === null) return { report_path: null, rejects_path: null };
  return { report_path: await existing(`${finalPath}.report.json`), rejects_path: await existing(`${finalPath}.rejects.csv`) };
}

export async function showFile(db: StateDb, id: number, firstRejects = SHOW_FIRST_REJECTS): Promise<FileDetail | undefined> {
  const file = getFile(db, id);
  if (!file) return undefined;
  const counts = fileCounts(db, id);
  const first: StoredReject[] = [];
  for (const reject of rejectsOf(db, id, ['local', 'api'])) {
    if (first.length >= firstRejects) break;
    first.push(reject);
  }
  const unfinished = UNFINISHED_STATUSES.includes(file.status);
  const location = await existing(unfinished ? file.processing_path : file.final_path);
  const original = file.duplicate_of === null ? undefined : getFile(db, file.duplicate_of);
  return {
    file,
    counts,
    location,
    ...(await reportFiles(file.final_path)),
    first_rejects: first,
    rejects_total: counts.rejectedLocal + counts.rejectedApi,
    batches: batchesOf(db, id, SHOW_BATCHES),
    duplicate_of: original
      ? { id: original.id, name: original.original_name, finished_at: original.finished_at, path: original.final_path }
      : null,
  };
}
