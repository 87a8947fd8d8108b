/**
 * The push pipeline's ledger: one row per file claimed from an inbox, its per-batch checkpoints, and every row that
 * was not written (rejected locally, refused by the API, superseded by another row with the same key, or merged:
 * added up into another row of its key, duplicate-keys.ts).
 *
 * Checkpoint rule: a batch's row (and the rejects found while filling it) is committed in one transaction after the
 * API answered for it, and never before. After a crash the file is read again from the start and every batch
 * without a committed row is sent again: safe, because bulk is idempotent per business key. Rejects are keyed by
 * (file, line), so finding one again on a re-read changes nothing.
 *
 * Owner of push_files, push_batches and push_rejects: nothing else writes them.
 */
import { sqlOf, type Queryable, type SqlValue, type Tx } from './sql-db.ts';
import type { StateDb } from './state-db.ts';

export const PUSH_STATUSES = ['claiming', 'claimed', 'uploading', 'waiting_job', 'done', 'failed', 'duplicate'] as const;
export type PushStatus = (typeof PUSH_STATUSES)[number];
/** Statuses of a file still owned by the pipeline (in processing/), resumed at start-up. */
export const UNFINISHED_STATUSES: readonly PushStatus[] = ['claiming', 'claimed', 'uploading', 'waiting_job'];

export type RejectStage = 'local' | 'api' | 'superseded' | 'merged';

export interface PushFile {
  id: number;
  source: string;
  entity: string;
  mode: 'bulk' | 'import';
  original_name: string;
  inbox: string;
  processing_path: string;
  sha256: string;
  size: number;
  batch_size: number;
  forced: number;
  status: PushStatus;
  job_id: string | null;
  rows_read: number | null;
  rows_sent: number | null;
  rows_accepted: number | null;
  rows_rejected: number | null;
  rows_superseded: number | null;
  /** Rows added up into another row of the file with the same key (duplicate_keys: sum; migration 0019). */
  rows_merged: number | null;
  /** Rows not sent because the platform already holds them (0 until delta push). */
  rows_unchanged: number | null;
  /** Rows `skip_rows` skipped. */
  rows_skipped: number | null;
  error_code: string | null;
  /** Why the file failed or was deferred, one sentence (null when it did not). */
  error_message: string | null;
  duplicate_of: number | null;
  claimed_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** Where the file went when it left processing/ (its report and rejects are beside it). */
  final_path: string | null;
  /** Set with final_path before the file is moved there; the row's status follows once the move is done. */
  final_status: 'done' | 'failed' | 'duplicate' | null;
  attempts: number;
  next_attempt_at: string | null;
  /** A corrected rejects CSV: the id of the file whose rejects it fixes (ingest/file/rejects-fix.ts). */
  fixes_file_id: number | null;
  /** The file's progress when the running attempt began; null while none runs (migration 0017, openAttempt). */
  attempt_progress: number | null;
  /** Deaths of the agent in a row while this file was in progress, without progress in between. */
  crashes: number;
  /** The fingerprint of the source's mapping the file was read with (null: claimed before it was recorded). */
  mapping: string | null;
}

export interface NewPushFile {
  source: string;
  entity: string;
  mode: 'bulk' | 'import';
  originalName: string;
  inbox: string;
  processingPath: string;
  sha256: string;
  size: number;
  batchSize: number;
  forced: boolean;
  /** The fingerprint of the source's mapping (ingest/delta/fingerprint.ts); absent: not known. */
  mapping?: string | null;
}

/** One problem of a rejected row. */
export interface RowProblem {
  readonly field: string | null;
  readonly code: string;
  readonly message: string;
}

export interface RejectRow {
  line: number;
  stage: RejectStage;
  /** The first problem (in schema order) of a rejected row; null field for a row-level one. */
  field: string | null;
  code: string;
  message: string;
  /** Every problem of a locally rejected row, when it has more than the first. */
  errors?: readonly RowProblem[] | undefined;
  /** The row's original fields. */
  raw: readonly string[];
  /** Superseded after it was sent and accepted: counted as superseded, not as sent or accepted. */
  sent?: boolean;
}

export interface BatchCheckpoint {
  index: number;
  firstLine: number;
  lastLine: number;
  sent: number;
  accepted: number;
  failed: number;
  superseded: number;
  /** Rows not sent because the platform already holds them (delta push); 0 until then. */
  unchanged?: number;
  /** Key hash and line of every accepted row (duplicate-keys.ts), to find keys repeated across batches. */
  keyHashes?: Uint8Array | undefined;
}

/**
 * What the ledger holds of a file's rows: the sums of its batches and its listed rejects by stage. What they mean as
 * row fates, and how they add up, is ingest/row-fate.ts's (FileCounts).
 */
export interface LedgerTallies {
  readonly batches: number;
  /** Sums of the batches' rows_sent, rows_accepted, rows_failed (refused by the API) and rows_unchanged. */
  readonly sent: number;
  readonly accepted: number;
  readonly refused: number;
  readonly unchanged: number;
  /** Rows listed in push_rejects, by stage, and of them how many had been sent (a row superseded after it was sent). */
  readonly listed: Readonly<Record<RejectStage, number>>;
  readonly supersededAfterSent: number;
}

/** A finished file's rows by fate, as push_files keeps them (row-fate.ts's finishedRows). */
export interface FinishedRows {
  readonly sent: number;
  readonly accepted: number;
  readonly rejected: number;
  readonly superseded: number;
  readonly merged: number;
  readonly unchanged: number;
}

/**
 * The file done earlier with the same content for the same entity, if any (the duplicate check). A file that failed,
 * or that was done without a row accepted, is not one: dropping its content again sends it again. `name`: for a
 * source whose file names are data (a store code in the name), only a file of that name is the same.
 */
/**
 * The last file of `entity` done with this content (and `name`, when the name is data) whose rows went under the
 * same mapping: from another source (whatever its mapping), or from `source` under `mapping` (a file from before
 * mappings were recorded counts as under any). Undefined: the content is new, or new under this mapping.
 */
export async function findDoneByContent(
  db: StateDb,
  entity: string,
  sha256: string,
  name: string | undefined,
  source: string,
  mapping: string | null,
): Promise<PushFile | undefined> {
  const sameName = name === undefined ? '' : ' AND original_name = ?';
  const sameMapping = mapping === null ? '' : ' AND (source <> ? OR mapping IS NULL OR mapping = ?)';
  return sqlOf(db).get<PushFile>(
    `SELECT * FROM push_files WHERE entity = ? AND sha256 = ? AND status = 'done' AND coalesce(rows_accepted, 0) > 0${sameName}${sameMapping}
       ORDER BY id DESC LIMIT 1`,
    [entity, sha256, ...(name === undefined ? [] : [name]), ...(mapping === null ? [] : [source, mapping])],
  );
}

/**
 * The last file of `file`'s source done with its content before it, when that one went under another mapping: why
 * `file` was sent again (null: it was not sent because of a mapping change).
 */
export async function doneUnderOtherMapping(db: StateDb, file: PushFile): Promise<PushFile | null> {
  if (file.mapping === null) return null;
  const last = await sqlOf(db).get<PushFile>(
    `SELECT * FROM push_files WHERE entity = ? AND sha256 = ? AND source = ? AND id < ? AND status = 'done'
       AND coalesce(rows_accepted, 0) > 0 ORDER BY id DESC LIMIT 1`,
    [file.entity, file.sha256, file.source, file.id],
  );
  return last !== undefined && last.mapping !== null && last.mapping !== file.mapping ? last : null;
}

/** Records a claim before the file is moved: a crash in between leaves a 'claiming' row that start-up completes. */
export async function beginClaim(db: StateDb, file: NewPushFile): Promise<number> {
  return (await beginClaimRow(db, file)).id;
}

/** beginClaim, resolving to the row as inserted (the pipeline's record of its file starts from it: file-run.ts). */
export async function beginClaimRow(db: StateDb, file: NewPushFile): Promise<PushFile> {
  return sqlOf(db).write(async (tx) => {
    const row = await tx.get<PushFile>(
      `INSERT INTO push_files (source, entity, mode, original_name, inbox, processing_path, sha256, size, batch_size,
         forced, mapping, status, claimed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'claiming', ?) RETURNING *`,
      [file.source, file.entity, file.mode, file.originalName, file.inbox, file.processingPath, file.sha256, file.size,
        file.batchSize, file.forced ? 1 : 0, file.mapping ?? null, tx.now],
    );
    if (row === undefined) throw new Error('INSERT ... RETURNING returned no row');
    return row;
  });
}

/**
 * One UPDATE of the file's row, committed on its own. Resolves to the row as committed (RETURNING), undefined when
 * there is no such file: the pipeline keeps its record of the file from these (ingest/file/file-run.ts) and never
 * reads the row back after a step.
 */
async function updateFile(db: StateDb, set: string, params: readonly SqlValue[], id: number): Promise<PushFile | undefined> {
  return sqlOf(db).write((tx) => tx.get<PushFile>(`UPDATE push_files SET ${set} WHERE id = ? RETURNING *`, [...params, id]));
}

export async function setStatus(db: StateDb, id: number, status: PushStatus): Promise<PushFile | undefined> {
  return updateFile(db, 'status = ?', [status], id);
}

/** How the file is sent, when it differs from its source's mode (custom product columns go as an import: push-file.ts). */
export async function setMode(db: StateDb, id: number, mode: 'bulk' | 'import'): Promise<PushFile | undefined> {
  return updateFile(db, 'mode = ?', [mode], id);
}

/**
 * The finished files of `source` whose rejects CSV may be named `rejectsStem + ".rejects.csv"`, newest first: the
 * name the file was archived under (`prices.17.csv`) or dropped as. Files before `beforeId` only.
 */
export async function filesNamed(db: StateDb, source: string, rejectsStem: string, beforeId: number): Promise<PushFile[]> {
  return sqlOf(db).all<PushFile>(
    `SELECT * FROM push_files WHERE source = ? AND id < ? AND final_path IS NOT NULL AND (original_name = ? OR final_path LIKE ? ESCAPE '\\')
     ORDER BY id DESC LIMIT 20`,
    [source, beforeId, rejectsStem, `%${rejectsStem.replace(/[\\%_]/g, (c) => `\\${c}`)}`],
  );
}

/** Records which file's rejects this one fixes (once: a resumed file keeps it). */
export async function setFixes(db: StateDb, id: number, fixesFileId: number): Promise<PushFile | undefined> {
  return updateFile(db, 'fixes_file_id = coalesce(fixes_file_id, ?)', [fixesFileId], id);
}

/** The file is claimed (in processing/); reading and sending start now. */
export async function markStarted(db: StateDb, id: number): Promise<PushFile | undefined> {
  return updateFile(
    db,
    `status = CASE WHEN status = 'claiming' THEN 'claimed' ELSE status END, started_at = coalesce(started_at, ?),
      attempts = attempts + 1, next_attempt_at = NULL`,
    [db.now()],
    id,
  );
}

/**
 * What an attempt on the file committed so far: its batches, and one more once an import job is known. A death of
 * the agent after the progress moved is not counted against the file (a large file killed at several points in a
 * row is resumed each time); one at the same point again is.
 */
const PROGRESS_SQL = `(SELECT count(*) FROM push_batches b WHERE b.file_id = f.id) + CASE WHEN f.job_id IS NULL THEN 0 ELSE 1 END`;

/**
 * An attempt on the file begins (issue 27, point 5): a mark left by the attempt before means the agent died while
 * the file was in progress. Resolves to the row as committed, whose `crashes` are the deaths in a row without
 * progress in between, this one included (0 when the last attempt ended); undefined when there is no such file. The
 * mark is committed before any work, so it survives the next death.
 */
export async function openAttempt(db: StateDb, id: number): Promise<PushFile | undefined> {
  return sqlOf(db).write(async (tx) => {
    const row = await tx.get<{ attempt_progress: number | string | null; crashes: number | string; progress: number | string }>(
      `SELECT f.attempt_progress, f.crashes, ${PROGRESS_SQL} AS progress FROM push_files f WHERE f.id = ?`,
      [id],
    );
    if (row === undefined) return undefined;
    const progress = Number(row.progress);
    let crashes = 0;
    if (row.attempt_progress !== null) crashes = Number(row.attempt_progress) === progress ? Number(row.crashes) + 1 : 1;
    return tx.get<PushFile>(`UPDATE push_files SET attempt_progress = ?, crashes = ? WHERE id = ? RETURNING *`, [progress, crashes, id]);
  });
}

/** The attempt ended without the agent dying (done, failed, deferred, drained): the deaths in a row start again. */
export async function closeAttempt(db: StateDb, id: number): Promise<void> {
  await updateFile(db, 'attempt_progress = NULL, crashes = 0', [], id);
}

/** An import job was accepted: from now on the file is resumed by polling this job, never by uploading again. */
export async function recordJob(db: StateDb, id: number, jobId: string): Promise<PushFile | undefined> {
  return updateFile(db, `status = 'waiting_job', job_id = ?`, [jobId], id);
}

/**
 * An import job failed on rows it named, and the file goes on as a new job without them (import-send.ts): in one
 * transaction the named rows become rejects and the job id is cleared, so a crash before or during the new upload
 * uploads it again without those rows, and a crash before this commit asks the failed job again.
 */
export async function recordResubmission(db: StateDb, fileId: number, rejects: readonly RejectRow[]): Promise<PushFile | undefined> {
  return sqlOf(db).write(async (tx) => {
    await insertRejects(tx, fileId, rejects);
    return tx.get<PushFile>(`UPDATE push_files SET status = 'uploading', job_id = NULL WHERE id = ? RETURNING *`, [fileId]);
  });
}

/** The file stays in processing/ and is tried again at `nextAttemptAt` (API down, rate limited, key rejected). */
export async function deferFile(db: StateDb, id: number, nextAttemptAt: string, error: { code: string; message: string }): Promise<PushFile | undefined> {
  return updateFile(db, 'next_attempt_at = ?, error_code = ?, error_message = ?', [nextAttemptAt, error.code, error.message], id);
}

export async function committedBatches(db: StateDb, fileId: number): Promise<Set<number>> {
  const rows = await sqlOf(db).all<{ batch_index: number }>(`SELECT batch_index FROM push_batches WHERE file_id = ?`, [fileId]);
  return new Set(rows.map((r) => r.batch_index));
}

const REJECTS_INSERT = {
  table: 'push_rejects',
  columns: ['file_id', 'line', 'stage', 'field', 'code', 'message', 'raw', 'errors', 'sent'],
  onConflict: { target: ['file_id', 'line'] },
} as const;

async function insertRejects(tx: Queryable, fileId: number, rejects: readonly RejectRow[]): Promise<void> {
  if (rejects.length === 0) return;
  await tx.insert(
    REJECTS_INSERT,
    rejects.map((r) => {
      const errors = r.errors !== undefined && r.errors.length > 1 ? JSON.stringify(r.errors) : null;
      return [fileId, r.line, r.stage, r.field, r.code, r.message, JSON.stringify(r.raw), errors, r.sent === true ? 1 : 0];
    }),
  );
}

/**
 * One transaction: the batch's checkpoint and the rows it did not write (plus local rejects found meanwhile).
 * Committed with relaxed durability: a power cut may lose the last checkpoints, which only sends those batches again
 * (bulk is idempotent per business key); a process crash loses nothing. An fsync per batch blocked the event loop
 * for a quarter of the push time. The file's finish (finishFile) is a full commit.
 */
export async function commitBatch(
  db: StateDb,
  fileId: number,
  batch: BatchCheckpoint,
  rejects: readonly RejectRow[],
  also?: (tx: Tx) => Promise<void>,
): Promise<void> {
  await sqlOf(db).write(async (tx) => {
    await tx.run(
      `INSERT INTO push_batches (file_id, batch_index, first_line, last_line, rows_sent, rows_accepted,
         rows_failed, rows_superseded, rows_unchanged, key_hashes, committed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (file_id, batch_index) DO NOTHING`,
      [fileId, batch.index, batch.firstLine, batch.lastLine, batch.sent, batch.accepted, batch.failed, batch.superseded,
        batch.unchanged ?? 0, batch.keyHashes ?? null, tx.now],
    );
    await insertRejects(tx, fileId, rejects);
    // What else the acceptance of these rows makes true, committed with it or not at all (delta push remembers the
    // accepted rows: src/store/delta-state.ts rememberAccepted).
    await also?.(tx);
  }, { durability: 'relaxed' });
}

/** The lines of the file whose rows the API refused in a committed batch (a resumed delta push does not resend them). */
export async function apiRejectedLines(db: StateDb, fileId: number): Promise<Set<number>> {
  const rows = await sqlOf(db).all<{ line: number }>(`SELECT line FROM push_rejects WHERE file_id = ? AND stage = 'api'`, [fileId]);
  return new Set(rows.map((r) => r.line));
}

/**
 * Delta push: the spans of lines (first to last, both included) of the file's committed batches, sorted and merged.
 * Batches are cut in file order, so every valid row within a span was settled by a committed batch (sent and
 * answered, or counted unchanged): a resumed attempt neither sends nor counts it again.
 */
export async function committedSpans(db: StateDb, fileId: number): Promise<[number, number][]> {
  const rows = await sqlOf(db).all<{ first_line: number; last_line: number }>(
    `SELECT first_line, last_line FROM push_batches WHERE file_id = ? ORDER BY first_line`,
    [fileId],
  );
  const spans: [number, number][] = [];
  for (const { first_line: first, last_line: last } of rows) {
    const previous = spans.at(-1);
    if (previous !== undefined && first <= previous[1] + 1) previous[1] = Math.max(previous[1], last);
    else spans.push([first, last]);
  }
  return spans;
}

/** Whether `line` lies within one of `spans` (committedSpans: sorted, disjoint). */
export function inSpans(spans: readonly (readonly [number, number])[], line: number): boolean {
  let lo = 0;
  let hi = spans.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [first, last] = spans[mid] as readonly [number, number];
    if (line < first) hi = mid - 1;
    else if (line > last) lo = mid + 1;
    else return true;
  }
  return false;
}

/** The highest batch index committed for the file, or -1. */
export async function lastBatchIndex(db: StateDb, fileId: number): Promise<number> {
  return (await sqlOf(db).value<number | null>(`SELECT max(batch_index) FROM push_batches WHERE file_id = ?`, [fileId])) ?? -1;
}

/** Rejects that belong to no batch (after the last batch, or in import mode). */
export async function recordRejects(db: StateDb, fileId: number, rejects: readonly RejectRow[]): Promise<void> {
  if (rejects.length > 0) await sqlOf(db).write((tx) => insertRejects(tx, fileId, rejects));
}

export async function ledgerTallies(db: StateDb, fileId: number): Promise<LedgerTallies> {
  const sql = sqlOf(db);
  const b = await sql.get<{ batches: number; sent: number | null; accepted: number | null; failed: number | null; unchanged: number | null }>(
    `SELECT count(*) AS batches, sum(rows_sent) AS sent, sum(rows_accepted) AS accepted, sum(rows_failed) AS failed,
       sum(rows_unchanged) AS unchanged FROM push_batches WHERE file_id = ?`,
    [fileId],
  );
  const r = await sql.all<{ stage: RejectStage; n: number; sent: number }>(
    `SELECT stage, count(*) AS n, sum(sent) AS sent FROM push_rejects WHERE file_id = ? GROUP BY stage`,
    [fileId],
  );
  const byStage = (stage: RejectStage) => r.find((x) => x.stage === stage)?.n ?? 0;
  return {
    batches: b?.batches ?? 0,
    sent: b?.sent ?? 0,
    accepted: b?.accepted ?? 0,
    refused: b?.failed ?? 0,
    unchanged: b?.unchanged ?? 0,
    listed: { local: byStage('local'), api: byStage('api'), superseded: byStage('superseded'), merged: byStage('merged') },
    supersededAfterSent: r.find((x) => x.stage === 'superseded')?.sent ?? 0,
  };
}

/** A committed batch as the ledger holds it (the file's history, for people). */
export interface StoredBatch {
  batch_index: number;
  first_line: number;
  last_line: number;
  rows_sent: number;
  rows_accepted: number;
  rows_failed: number;
  rows_superseded: number;
  committed_at: string;
}

/** The first `limit` committed batches of a file, in batch order. */
export async function batchesOf(db: StateDb, fileId: number, limit: number): Promise<StoredBatch[]> {
  return sqlOf(db).all<StoredBatch>(
    `SELECT batch_index, first_line, last_line, rows_sent, rows_accepted, rows_failed, rows_superseded, committed_at
     FROM push_batches WHERE file_id = ? ORDER BY batch_index LIMIT ?`,
    [fileId, limit],
  );
}

/** The key hashes of the file's batches, in batch order (see BatchCheckpoint.keyHashes). */
export async function* keyHashesOf(db: StateDb, fileId: number): AsyncGenerator<Uint8Array> {
  let after = -1;
  for (;;) {
    const rows = await sqlOf(db).all<{ batch_index: number; key_hashes: Uint8Array }>(
      `SELECT batch_index, key_hashes FROM push_batches WHERE file_id = ? AND batch_index > ? AND key_hashes IS NOT NULL
       ORDER BY batch_index LIMIT 100`,
      [fileId, after],
    ); // in pages, nothing left open across the caller's awaits: see rejectsOf
    for (const row of rows) yield row.key_hashes;
    const last = rows.at(-1);
    if (last === undefined || rows.length < 100) return;
    after = last.batch_index;
  }
}

export interface StoredReject extends Omit<RejectRow, 'raw' | 'errors'> {
  raw: string[];
  /** Every problem of the row, the first included. */
  errors: RowProblem[];
}

/** The rows a file did not write, in line order (for the rejects CSV and the report). */
export async function* rejectsOf(db: StateDb, fileId: number, stages: readonly RejectStage[]): AsyncGenerator<StoredReject> {
  // Read in pages: the rejects CSV is streamed to disk between them, and no statement or transaction stays open
  // across those awaits (a statement left open made every other statement on the SQLite connection fail with
  // "This database connection is busy executing a query", found by the chaos suite).
  let after = -1;
  for (;;) {
    const rows = await sqlOf(db).all<{ line: number; stage: RejectStage; field: string | null; code: string; message: string; raw: string; errors: string | null; sent: number }>(
      `SELECT line, stage, field, code, message, raw, errors, sent FROM push_rejects WHERE file_id = ? AND line > ? ORDER BY line LIMIT ${REJECTS_PAGE}`,
      [fileId, after],
    );
    for (const row of rows) {
      if (!stages.includes(row.stage)) continue;
      const { field, code, message } = row;
      const errors = row.errors === null ? [{ field, code, message }] : (JSON.parse(row.errors) as RowProblem[]);
      yield { line: row.line, stage: row.stage, field, code, message, raw: JSON.parse(row.raw) as string[], errors, sent: row.sent === 1 };
    }
    const last = rows.at(-1);
    if (last === undefined || rows.length < REJECTS_PAGE) return;
    after = last.line;
  }
}

const REJECTS_PAGE = 1000;

export interface FileOutcome {
  status: 'done' | 'failed' | 'duplicate';
  finalPath: string;
  rowsRead?: number | null;
  rowsSkipped?: number | null;
  rows?: FinishedRows;
  error?: { code: string; message: string } | null;
  duplicateOf?: number | null;
}

/** The file left processing/: its final place and counts. */
export async function finishFile(db: StateDb, id: number, outcome: FileOutcome): Promise<PushFile | undefined> {
  const c = outcome.rows;
  return updateFile(
    db,
    `status = ?, final_path = ?, finished_at = ?, rows_read = ?, rows_sent = ?, rows_accepted = ?, rows_rejected = ?,
      rows_superseded = ?, rows_merged = ?, rows_unchanged = ?, rows_skipped = ?, error_code = ?, error_message = ?, duplicate_of = ?,
      next_attempt_at = NULL`,
    [outcome.status, outcome.finalPath, db.now(), outcome.rowsRead ?? null, c?.sent ?? null, c?.accepted ?? null,
      c?.rejected ?? null, c?.superseded ?? null, c?.merged ?? null, c?.unchanged ?? null, outcome.rowsSkipped ?? null,
      outcome.error?.code ?? null, outcome.error?.message ?? null, outcome.duplicateOf ?? null],
    id,
  );
}

export async function getFile(db: StateDb, id: number): Promise<PushFile | undefined> {
  return sqlOf(db).get<PushFile>(`SELECT * FROM push_files WHERE id = ?`, [id]);
}

/** Files still owned by the pipeline, oldest first (resumed before new files are taken). */
export async function unfinishedFiles(db: StateDb, source?: string): Promise<PushFile[]> {
  const placeholders = UNFINISHED_STATUSES.map(() => '?').join(', ');
  const rows = await sqlOf(db).all<PushFile>(`SELECT * FROM push_files WHERE status IN (${placeholders}) ORDER BY id`, UNFINISHED_STATUSES);
  return source === undefined ? rows : rows.filter((r) => r.source === source);
}

/** Where the claimed file lives in processing/ (known once the row has its id). */
export async function setProcessingPath(db: StateDb, id: number, path: string): Promise<PushFile | undefined> {
  return updateFile(db, 'processing_path = ?', [path], id);
}

/** The content hash of the claimed file, taken after it was moved into processing/. */
export async function setContentHash(db: StateDb, id: number, sha256: string): Promise<PushFile | undefined> {
  return updateFile(db, 'sha256 = ?', [sha256], id);
}

/** Removes a claim whose file vanished before it was moved: nothing of it was ever ours. */
export async function dropClaim(db: StateDb, id: number): Promise<void> {
  await sqlOf(db).write((tx) => tx.run(`DELETE FROM push_files WHERE id = ? AND status = 'claiming'`, [id]));
}

/** What `prepareFinish` records before the move: enough to close the row the same way after a crash. */
export type PreparedFinish = Pick<FileOutcome, 'status' | 'finalPath' | 'error' | 'duplicateOf'>;

/**
 * Records where the file is about to go and with which outcome (its status, its error, the file it duplicates),
 * before it is moved. If the agent dies after the move, start-up finds the file at `final_path` and closes the row
 * with what was recorded here (ingest/file/push-file.ts completeMove), so the ledger says what the report beside the
 * file says. Before, only the status was recorded: a file killed after its move to failed/ was closed without its
 * error code (a CRASHED_AGENT or HELD file showed as failed for no reason, and held files were no longer held).
 */
export async function prepareFinish(db: StateDb, id: number, outcome: PreparedFinish): Promise<PushFile | undefined> {
  return updateFile(
    db,
    'final_path = ?, final_status = ?, error_code = ?, error_message = ?, duplicate_of = ?',
    [outcome.finalPath, outcome.status, outcome.error?.code ?? null, outcome.error?.message ?? null, outcome.duplicateOf ?? null],
    id,
  );
}

/** The most fields any reject of the file has (a row with more fields than the header), for the rejects CSV. */
export async function maxRawFields(db: StateDb, fileId: number): Promise<number> {
  const sql = sqlOf(db);
  const length = sql.dialect.jsonArrayLength('raw');
  return (await sql.value<number>(`SELECT coalesce(max(${length}), 0) FROM push_rejects WHERE file_id = ?`, [fileId])) ?? 0;
}
