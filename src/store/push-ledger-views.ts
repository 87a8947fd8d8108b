/**
 * The push ledger for people (status, `files list`): counts per source, the last file of a source, the files in
 * processing/, a filtered list. Reads only; push_files belongs to push-ledger.ts.
 */
import { HELD_ERROR_CODE } from './delta-state.ts';
import { PUSH_STATUSES, UNFINISHED_STATUSES, type PushFile } from './push-ledger.ts';
import { sqlOf } from './sql-db.ts';
import type { StateDb } from './state-db.ts';

/** Per source: files in processing/ (and deferred ones), and what finished between `start` and `end`. */
export interface LedgerCounts {
  source: string;
  entity: string;
  inbox: string;
  processing: number;
  /** Of `processing`: files waiting for a retry after a failure that may pass (API down, key rejected, ...). */
  deferred: number;
  next_retry_at: string | null;
  done_today: number;
  /** Failed today, held files and failed files fixed since left out. */
  failed_today: number;
  duplicate_today: number;
  rows_accepted_today: number | null;
  rows_rejected_today: number | null;
  /** Rows added up into another row of their file today (duplicate_keys: sum). */
  rows_merged_today: number | null;
}

const UNFINISHED = UNFINISHED_STATUSES.map((s) => `'${s}'`).join(', ');

/**
 * The file that fixed failed file `f` (an SQL expression over push_files as `f`): the first later file of its source,
 * done, that is a corrected copy of it (dropped again under the same name) or of its rejects (fixes_file_id). A
 * failed file so fixed links to its fix and no longer counts as failed today: the operator has nothing left to do.
 */
const FIXED_BY = `(SELECT min(fix.id) FROM push_files fix WHERE fix.source = f.source AND fix.id > f.id AND fix.status = 'done'
    AND (fix.fixes_file_id = f.id OR fix.original_name = f.original_name))`;

/** Counts per source; "today" is [start, end) (ISO instants, comparable with the ledger's text). */
export async function ledgerCounts(db: StateDb, start: string, end: string): Promise<LedgerCounts[]> {
  const today = `finished_at >= ? AND finished_at < ?`;
  return sqlOf(db).all<LedgerCounts>(
    `SELECT source, max(entity) AS entity, max(inbox) AS inbox,
       count(*) FILTER (WHERE status IN (${UNFINISHED})) AS processing,
       count(*) FILTER (WHERE status IN (${UNFINISHED}) AND next_attempt_at IS NOT NULL) AS deferred,
       min(next_attempt_at) FILTER (WHERE status IN (${UNFINISHED})) AS next_retry_at,
       count(*) FILTER (WHERE status = 'done' AND ${today}) AS done_today,
       count(*) FILTER (WHERE status = 'failed' AND error_code IS DISTINCT FROM '${HELD_ERROR_CODE}' AND ${today} AND ${FIXED_BY} IS NULL) AS failed_today,
       count(*) FILTER (WHERE status = 'duplicate' AND ${today}) AS duplicate_today,
       sum(rows_accepted) FILTER (WHERE ${today}) AS rows_accepted_today,
       sum(rows_rejected) FILTER (WHERE ${today}) AS rows_rejected_today,
       sum(rows_merged) FILTER (WHERE ${today}) AS rows_merged_today
     FROM push_files f GROUP BY source`,
    [start, end, start, end, start, end, start, end, start, end, start, end],
  );
}

/** A file's status as people see it: a file the brakes held is `held` (the ledger records it as failed, code HELD). */
const SHOWN_STATUS = `CASE WHEN error_code = '${HELD_ERROR_CODE}' THEN 'held' ELSE status END AS status`;

/** SHOWN_STATUS for a file already read (`files show`). */
export function shownStatus(file: Pick<PushFile, 'status' | 'error_code'>): string {
  return file.error_code === HELD_ERROR_CODE ? 'held' : file.status;
}

/** The newest file of `source`. */
export async function lastFileOf(
  db: StateDb,
  source: string,
): Promise<Pick<PushFile, 'id' | 'original_name' | 'status' | 'claimed_at' | 'finished_at' | 'fixes_file_id'> | undefined> {
  return sqlOf(db).get(
    `SELECT id, original_name, ${SHOWN_STATUS}, claimed_at, finished_at, fixes_file_id
     FROM push_files WHERE source = ? ORDER BY id DESC LIMIT 1`,
    [source],
  );
}

/** A file in processing/ with its last error (deferred), for the list under the table. */
export interface ProcessingFile {
  id: number;
  source: string;
  name: string;
  status: string;
  attempts: number;
  error_code: string | null;
  error_message: string | null;
  next_attempt_at: string | null;
}

/** Files still in processing/, oldest first. */
export async function processingFiles(db: StateDb): Promise<ProcessingFile[]> {
  return sqlOf(db).all<ProcessingFile>(
    `SELECT id, source, original_name AS name, status, attempts, error_code, error_message, next_attempt_at
     FROM push_files WHERE status IN (${UNFINISHED}) ORDER BY id`,
  );
}

/** `--status` values: a ledger status, or `processing` for every status of a file still in processing/. */
export const FILE_STATUS_FILTERS = [...PUSH_STATUSES, 'processing', 'held'] as const;
export type FileStatusFilter = (typeof FILE_STATUS_FILTERS)[number];

export const DEFAULT_LIST_LIMIT = 50;

/** A file as `files list` shows it: columns of its ledger row, its name, its shown status and the file that fixed it. */
export interface FileListItem
  extends Pick<
    PushFile,
    | 'id'
    | 'source'
    | 'entity'
    | 'rows_read'
    | 'rows_accepted'
    | 'rows_rejected'
    | 'rows_superseded'
    | 'rows_merged'
    | 'rows_unchanged'
    | 'rows_skipped'
    | 'claimed_at'
    | 'finished_at'
    | 'error_code'
    | 'error_message'
    | 'next_attempt_at'
    | 'final_path'
    | 'fixes_file_id'
  > {
  name: string;
  /** The ledger's status, or `held` for a file the brakes held (SHOWN_STATUS). */
  status: string;
  /** A failed file fixed since: the id of the file that fixed it (FIXED_BY). */
  fixed_by: number | null;
}

export interface ListFilter {
  readonly source?: string;
  readonly status?: FileStatusFilter;
  readonly limit?: number;
}

/** The newest files first. */
export async function listFiles(db: StateDb, filter: ListFilter = {}): Promise<FileListItem[]> {
  const where: string[] = [];
  const params: (string | number)[] = [];
  if (filter.source !== undefined) {
    where.push('source = ?');
    params.push(filter.source);
  }
  if (filter.status === 'held') {
    where.push(`error_code = '${HELD_ERROR_CODE}'`);
  } else if (filter.status !== undefined) {
    const statuses = filter.status === 'processing' ? UNFINISHED_STATUSES : [filter.status];
    // Held files are recorded as failed and shown as held (SHOWN_STATUS): `--status failed` leaves them out.
    where.push(`status IN (${statuses.map(() => '?').join(', ')}) AND error_code IS DISTINCT FROM '${HELD_ERROR_CODE}'`);
    params.push(...statuses);
  }
  const sql = `SELECT id, source, entity, original_name AS name, ${SHOWN_STATUS}, rows_read, rows_accepted, rows_rejected,
      rows_superseded, rows_merged, rows_unchanged, rows_skipped, claimed_at, finished_at, error_code, error_message, next_attempt_at, final_path, fixes_file_id,
      CASE WHEN status = 'failed' THEN ${FIXED_BY} END AS fixed_by FROM push_files f ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
    ORDER BY id DESC LIMIT ?`;
  return sqlOf(db).all<FileListItem>(sql, [...params, filter.limit ?? DEFAULT_LIST_LIMIT]);
}

/** How many files have reached a final status (done, failed or duplicate). */
export async function countFinishedFiles(db: StateDb): Promise<number> {
  return (await sqlOf(db).value<number>(`SELECT count(*) FROM push_files WHERE status IN ('done', 'failed', 'duplicate')`)) ?? 0;
}

/** The newest file of `source` that was dropped as `name`. */
export async function lastFileNamed(
  db: StateDb,
  source: string,
  name: string,
): Promise<Pick<PushFile, 'id' | 'status' | 'rows_read' | 'rows_accepted' | 'rows_rejected' | 'final_path'> | undefined> {
  return sqlOf(db).get(
    `SELECT id, status, rows_read, rows_accepted, rows_rejected, final_path FROM push_files
     WHERE source = ? AND original_name = ? ORDER BY id DESC LIMIT 1`,
    [source, name],
  );
}
