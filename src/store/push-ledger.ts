/**
 * The push pipeline's ledger: one row per file claimed from an inbox, its per-batch checkpoints, and every row that
 * was not written (rejected locally, refused by the API, or superseded by a later row with the same key).
 *
 * Checkpoint rule: a batch's row (and the rejects found while filling it) is committed in one transaction after the
 * API answered for it, and never before. After a crash the file is read again from the start and every batch
 * without a committed row is sent again: safe, because bulk is idempotent per business key. Rejects are keyed by
 * (file, line), so finding one again on a re-read changes nothing.
 *
 * Owner of push_files, push_batches and push_rejects: nothing else writes them.
 */
import type { StateDb } from './state-db.ts';

export const PUSH_STATUSES = ['claiming', 'claimed', 'uploading', 'waiting_job', 'done', 'failed', 'duplicate'] as const;
export type PushStatus = (typeof PUSH_STATUSES)[number];
/** Statuses of a file still owned by the pipeline (in processing/), resumed at start-up. */
export const UNFINISHED_STATUSES: readonly PushStatus[] = ['claiming', 'claimed', 'uploading', 'waiting_job'];

export type RejectStage = 'local' | 'api' | 'superseded';

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
  rows_unchanged: number | null;
  rows_skipped: number | null;
  error_code: string | null;
  error_message: string | null;
  duplicate_of: number | null;
  claimed_at: string;
  started_at: string | null;
  finished_at: string | null;
  final_path: string | null;
  /** Set with final_path before the file is moved there; the row's status follows once the move is done. */
  final_status: 'done' | 'failed' | 'duplicate' | null;
  attempts: number;
  next_attempt_at: string | null;
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
 * The rows of a file by fate. read = sent + unchanged + rejectedLocal + superseded + skipped, and sent = accepted +
 * failed (skipped rows and the rows read come from the reader, not from here).
 */
export interface FileCounts {
  batches: number;
  /** Rows sent and not superseded afterwards. */
  sent: number;
  /** Rows the platform holds from this file. */
  accepted: number;
  /** Rows the API refused (from the batches' results; an import job may list only its first errors). */
  failed: number;
  rejectedLocal: number;
  rejectedApi: number;
  superseded: number;
  unchanged: number;
}

/**
 * The file done earlier with the same content for the same entity, if any (the duplicate check). A file that failed,
 * or that was done without a row accepted, is not one: dropping its content again sends it again. `name`: for a
 * source whose file names are data (a store code in the name), only a file of that name is the same.
 */
export function findDoneByContent(db: StateDb, entity: string, sha256: string, name?: string): PushFile | undefined {
  const sameName = name === undefined ? '' : ' AND original_name = ?';
  return db
    .statement<PushFile>(
      `SELECT * FROM push_files WHERE entity = ? AND sha256 = ? AND status = 'done' AND coalesce(rows_accepted, 0) > 0${sameName} ORDER BY id LIMIT 1`,
    )
    .get(...(name === undefined ? [entity, sha256] : [entity, sha256, name]));
}

/** Records a claim before the file is moved: a crash in between leaves a 'claiming' row that start-up completes. */
export function beginClaim(db: StateDb, file: NewPushFile): number {
  return db.write(() => {
    const result = db
      .statement(
        `INSERT INTO push_files (source, entity, mode, original_name, inbox, processing_path, sha256, size, batch_size,
           forced, status, claimed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'claiming', ?)`,
      )
      .run(file.source, file.entity, file.mode, file.originalName, file.inbox, file.processingPath, file.sha256, file.size,
        file.batchSize, file.forced ? 1 : 0, db.now());
    return Number(result.lastInsertRowid);
  });
}

export function setStatus(db: StateDb, id: number, status: PushStatus): void {
  db.write(() => db.statement(`UPDATE push_files SET status = ? WHERE id = ?`).run(status, id));
}

/** The file is claimed (in processing/); reading and sending start now. */
export function markStarted(db: StateDb, id: number): void {
  db.write(() =>
    db.statement(`UPDATE push_files SET status = CASE WHEN status = 'claiming' THEN 'claimed' ELSE status END,
      started_at = coalesce(started_at, ?), attempts = attempts + 1, next_attempt_at = NULL WHERE id = ?`).run(db.now(), id),
  );
}

/** An import job was accepted: from now on the file is resumed by polling this job, never by uploading again. */
export function recordJob(db: StateDb, id: number, jobId: string): void {
  db.write(() => db.statement(`UPDATE push_files SET status = 'waiting_job', job_id = ? WHERE id = ?`).run(jobId, id));
}

/** The file stays in processing/ and is tried again at `nextAttemptAt` (API down, rate limited, key rejected). */
export function deferFile(db: StateDb, id: number, nextAttemptAt: string, error: { code: string; message: string }): void {
  db.write(() =>
    db.statement(`UPDATE push_files SET next_attempt_at = ?, error_code = ?, error_message = ? WHERE id = ?`)
      .run(nextAttemptAt, error.code, error.message, id),
  );
}

export function committedBatches(db: StateDb, fileId: number): Set<number> {
  const rows = db.statement<{ batch_index: number }>(`SELECT batch_index FROM push_batches WHERE file_id = ?`).all(fileId);
  return new Set(rows.map((r) => r.batch_index));
}

function insertRejects(db: StateDb, fileId: number, rejects: readonly RejectRow[]): void {
  const insert = db.statement(
    `INSERT OR IGNORE INTO push_rejects (file_id, line, stage, field, code, message, raw, errors, sent) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const r of rejects) {
    const errors = r.errors !== undefined && r.errors.length > 1 ? JSON.stringify(r.errors) : null;
    insert.run(fileId, r.line, r.stage, r.field, r.code, r.message, JSON.stringify(r.raw), errors, r.sent === true ? 1 : 0);
  }
}

/**
 * One transaction: the batch's checkpoint and the rows it did not write (plus local rejects found meanwhile).
 * Committed with relaxed durability: a power cut may lose the last checkpoints, which only sends those batches again
 * (bulk is idempotent per business key); a process crash loses nothing. An fsync per batch blocked the event loop
 * for a quarter of the push time. The file's finish (finishFile) is a full commit.
 */
export function commitBatch(db: StateDb, fileId: number, batch: BatchCheckpoint, rejects: readonly RejectRow[], also?: () => void): void {
  db.write(() => {
    db.statement(
      `INSERT OR IGNORE INTO push_batches (file_id, batch_index, first_line, last_line, rows_sent, rows_accepted,
         rows_failed, rows_superseded, rows_unchanged, key_hashes, committed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(fileId, batch.index, batch.firstLine, batch.lastLine, batch.sent, batch.accepted, batch.failed, batch.superseded,
      batch.unchanged ?? 0, batch.keyHashes ?? null, db.now());
    insertRejects(db, fileId, rejects);
    // What else the acceptance of these rows makes true, committed with it or not at all (delta push remembers the
    // accepted rows: src/store/delta-state.ts rememberAccepted).
    also?.();
  }, { durability: 'relaxed' });
}

/** The lines of the file whose rows the API refused in a committed batch (a resumed delta push does not resend them). */
export function apiRejectedLines(db: StateDb, fileId: number): Set<number> {
  const lines = db.statement<number>(`SELECT line FROM push_rejects WHERE file_id = ? AND stage = 'api'`).pluck().all(fileId);
  return new Set(lines);
}

/**
 * Delta push: an attempt at a file counts its unchanged rows itself, in its own batches; the counts of an earlier
 * attempt are zeroed first, so that a resumed file does not count a row twice.
 */
export function resetUnchanged(db: StateDb, fileId: number): void {
  db.write(() => db.statement(`UPDATE push_batches SET rows_unchanged = 0 WHERE file_id = ? AND rows_unchanged > 0`).run(fileId));
}

/** The highest batch index committed for the file, or -1. */
export function lastBatchIndex(db: StateDb, fileId: number): number {
  return db.statement<number | null>(`SELECT max(batch_index) FROM push_batches WHERE file_id = ?`).pluck().get(fileId) ?? -1;
}

/** Rejects that belong to no batch (after the last batch, or in import mode). */
export function recordRejects(db: StateDb, fileId: number, rejects: readonly RejectRow[]): void {
  if (rejects.length > 0) db.write(() => insertRejects(db, fileId, rejects));
}

export function fileCounts(db: StateDb, fileId: number): FileCounts {
  const b = db
    .statement<{ batches: number; sent: number | null; accepted: number | null; failed: number | null; unchanged: number | null }>(
      `SELECT count(*) AS batches, sum(rows_sent) AS sent, sum(rows_accepted) AS accepted, sum(rows_failed) AS failed,
         sum(rows_unchanged) AS unchanged FROM push_batches WHERE file_id = ?`,
    )
    .get(fileId);
  const r = db
    .statement<{ stage: RejectStage; n: number; sent: number }>(
      `SELECT stage, count(*) AS n, sum(sent) AS sent FROM push_rejects WHERE file_id = ? GROUP BY stage`,
    )
    .all(fileId);
  const byStage = (stage: RejectStage) => r.find((x) => x.stage === stage)?.n ?? 0;
  // Rows superseded after they were sent and accepted: superseded, no longer sent or accepted.
  const supersededSent = r.find((x) => x.stage === 'superseded')?.sent ?? 0;
  return {
    batches: b?.batches ?? 0,
    sent: (b?.sent ?? 0) - supersededSent,
    accepted: (b?.accepted ?? 0) - supersededSent,
    failed: b?.failed ?? 0,
    rejectedLocal: byStage('local'),
    rejectedApi: byStage('api'),
    superseded: byStage('superseded'),
    unchanged: b?.unchanged ?? 0,
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
export function batchesOf(db: StateDb, fileId: number, limit: number): StoredBatch[] {
  return db
    .statement<StoredBatch>(
      `SELECT batch_index, first_line, last_line, rows_sent, rows_accepted, rows_failed, rows_superseded, committed_at
       FROM push_batches WHERE file_id = ? ORDER BY batch_index LIMIT ?`,
    )
    .all(fileId, limit);
}

/** The key hashes of the file's batches, in batch order (see BatchCheckpoint.keyHashes). */
export function* keyHashesOf(db: StateDb, fileId: number): Generator<Uint8Array> {
  const page = db.statement<{ batch_index: number; key_hashes: Uint8Array }>(
    `SELECT batch_index, key_hashes FROM push_batches WHERE file_id = ? AND batch_index > ? AND key_hashes IS NOT NULL
     ORDER BY batch_index LIMIT 100`,
  );
  let after = -1;
  for (;;) {
    const rows = page.all(fileId, after); // pages with all(), never iterate(): see rejectsOf
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
export function* rejectsOf(db: StateDb, fileId: number, stages: readonly RejectStage[]): Generator<StoredReject> {
  // Read in pages with all(), never with iterate(): the rejects CSV is streamed to disk, and a statement left open
  // across those awaits makes every other statement on the connection (the pull, other sources' checkpoints) fail
  // with "This database connection is busy executing a query" (found by the chaos suite).
  const page = db.statement<{ line: number; stage: RejectStage; field: string | null; code: string; message: string; raw: string; errors: string | null; sent: number }>(
    `SELECT line, stage, field, code, message, raw, errors, sent FROM push_rejects WHERE file_id = ? AND line > ? ORDER BY line LIMIT ${REJECTS_PAGE}`,
  );
  let after = -1;
  for (;;) {
    const rows = page.all(fileId, after);
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
  counts?: FileCounts;
  error?: { code: string; message: string } | null;
  duplicateOf?: number | null;
}

/** The file left processing/: its final place and counts. */
export function finishFile(db: StateDb, id: number, outcome: FileOutcome): void {
  const c = outcome.counts;
  db.write(() =>
    db.statement(
      `UPDATE push_files SET status = ?, final_path = ?, finished_at = ?, rows_read = ?, rows_sent = ?, rows_accepted = ?,
         rows_rejected = ?, rows_superseded = ?, rows_unchanged = ?, rows_skipped = ?, error_code = ?, error_message = ?,
         duplicate_of = ?, next_attempt_at = NULL
       WHERE id = ?`,
    ).run(outcome.status, outcome.finalPath, db.now(), outcome.rowsRead ?? null, c?.sent ?? null, c?.accepted ?? null,
      c ? c.rejectedLocal + c.failed : null, c?.superseded ?? null, c?.unchanged ?? null, outcome.rowsSkipped ?? null,
      outcome.error?.code ?? null, outcome.error?.message ?? null, outcome.duplicateOf ?? null, id),
  );
}

export function getFile(db: StateDb, id: number): PushFile | undefined {
  return db.statement<PushFile>(`SELECT * FROM push_files WHERE id = ?`).get(id);
}

/** Files still owned by the pipeline, oldest first (resumed before new files are taken). */
export function unfinishedFiles(db: StateDb, source?: string): PushFile[] {
  const placeholders = UNFINISHED_STATUSES.map(() => '?').join(', ');
  const rows = db.statement<PushFile>(`SELECT * FROM push_files WHERE status IN (${placeholders}) ORDER BY id`).all(...UNFINISHED_STATUSES);
  return source === undefined ? rows : rows.filter((r) => r.source === source);
}

/** Where the claimed file lives in processing/ (known once the row has its id). */
export function setProcessingPath(db: StateDb, id: number, path: string): void {
  db.write(() => db.statement(`UPDATE push_files SET processing_path = ? WHERE id = ?`).run(path, id));
}

/** The content hash of the claimed file, taken after it was moved into processing/. */
export function setContentHash(db: StateDb, id: number, sha256: string): void {
  db.write(() => db.statement(`UPDATE push_files SET sha256 = ? WHERE id = ?`).run(sha256, id));
}

/** Removes a claim whose file vanished before it was moved: nothing of it was ever ours. */
export function dropClaim(db: StateDb, id: number): void {
  db.write(() => db.statement(`DELETE FROM push_files WHERE id = ? AND status = 'claiming'`).run(id));
}

/**
 * Records where the file is about to go and with which outcome, before it is moved. If the agent dies after the
 * move, start-up finds the file at `final_path` and closes the row with `final_status` (see finishMovedFile).
 */
export function prepareFinish(db: StateDb, id: number, finalPath: string, status: 'done' | 'failed' | 'duplicate'): void {
  db.write(() => db.statement(`UPDATE push_files SET final_path = ?, final_status = ? WHERE id = ?`).run(finalPath, status, id));
}

/** The most fields any reject of the file has (a row with more fields than the header), for the rejects CSV. */
export function maxRawFields(db: StateDb, fileId: number): number {
  return db.statement<number>(`SELECT coalesce(max(json_array_length(raw)), 0) FROM push_rejects WHERE file_id = ?`).pluck().get(fileId) ?? 0;
}
