/**
 * The push ledger for people: a filtered list of files (src/store/push-ledger-views.ts), and one file in detail (its
 * row, its counts, where it and its report are now, its first rejects). Reads only.
 */
import { stat } from 'node:fs/promises';
import { fileCounts, type FileCounts } from '../ingest/file/row-fate.ts';
import {
  batchesOf,
  getFile,
  rejectsOf,
  UNFINISHED_STATUSES,
  type PushFile,
  type StoredBatch,
  type StoredReject,
} from '../store/push-ledger.ts';
import { deltaFile, type DeltaFileRecord } from '../store/delta-state.ts';
import { shownStatus } from '../store/push-ledger-views.ts';
import type { StateDb } from '../store/state-db.ts';

// The list itself is a query of the ledger (src/store/push-ledger-views.ts); this module adds what is on disk.
export {
  DEFAULT_LIST_LIMIT,
  FILE_STATUS_FILTERS,
  listFiles,
  type FileListItem,
  type FileStatusFilter,
  type ListFilter,
} from '../store/push-ledger-views.ts';

export const SHOW_FIRST_REJECTS = 10;
/** Batches listed in a file's history (the counts cover all of them). */
export const SHOW_BATCHES = 100;

export interface FileDetail {
  file: PushFile;
  /** The status as `files list` and `status` show it (`held` for a file the brakes hold; the ledger says failed). */
  status: string;
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
  duplicate_of: FileRef | null;
  /** A corrected rejects CSV: the file whose rejects it fixes (ingest/file/rejects-fix.ts). */
  fixes: FileRef | null;
  /** A delta source's file: what the comparison decided (why each row was sent), or null. */
  delta: DeltaFileRecord | null;
}

/** Another file of the ledger, as a file's detail names it. */
export interface FileRef {
  id: number;
  name: string;
  finished_at: string | null;
  path: string | null;
}

async function fileRef(db: StateDb, id: number | null): Promise<FileRef | null> {
  const file = id === null ? undefined : await getFile(db, id);
  return file ? { id: file.id, name: file.original_name, finished_at: file.finished_at, path: file.final_path } : null;
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
  const file = await getFile(db, id);
  if (!file) return undefined;
  const counts = await fileCounts(db, id);
  const first: StoredReject[] = [];
  for await (const reject of rejectsOf(db, id, ['local', 'api'])) {
    if (first.length >= firstRejects) break;
    first.push(reject);
  }
  const unfinished = UNFINISHED_STATUSES.includes(file.status);
  const location = await existing(unfinished ? file.processing_path : file.final_path);
  return {
    file,
    status: shownStatus(file),
    counts,
    location,
    ...(await reportFiles(file.final_path)),
    first_rejects: first,
    rejects_total: counts.rejectsListed,
    batches: await batchesOf(db, id, SHOW_BATCHES),
    duplicate_of: await fileRef(db, file.duplicate_of),
    fixes: await fileRef(db, file.fixes_file_id),
    delta: (await deltaFile(db, id)) ?? null,
  };
}
