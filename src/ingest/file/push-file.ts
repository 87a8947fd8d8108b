/**
 * The life of one file: claim, read, send, reconcile, report, archive. Every file ends in exactly one of:
 *
 * - done: moved to archive/<date>/ with its report (every row accepted, or some rows rejected);
 * - failed: moved to failed/ with its report (a file-level failure: unreadable, unclosed quote, failed import job,
 *   counts that do not reconcile; or its rows: none accepted, or more rejected than reject_threshold, row-fate.ts);
 * - duplicate: content already sent for this entity; archived with a report naming the earlier file;
 * - deferred: left in processing/ to be tried again (the API still failing after the client's retries, the key
 *   rejected, the state disk full, a drain). Nothing is lost: the next attempt resumes at the first batch without a
 *   committed result.
 *
 * The file's ledger row is kept by its run (file-run.ts) from the claim on; no step reads it back.
 *
 * Passes over the file in one attempt. The reader opened to see a products file's header (custom columns make it an
 * import) is the first pass's own reader, so the header costs no read of its own. The other passes are each needed
 * before the one after can start, and the rows are never held in memory between two of them (files of millions of
 * rows, constant memory):
 * - the claim hashes the bytes (claim.ts: the duplicate check comes before anything is parsed or sent);
 * - delta push: the comparison reads the whole file before a row is sent, because the brakes judge the whole file
 *   and a held file sends nothing; the send pass then reads it again, skipping the lines of unchanged rows as bytes
 *   (line mode may read undecided lines once more; a held file is read once more for its preview);
 * - duplicate_keys first, sum or reject (duplicate-keys.ts): a key pass before the send pass, because a row's fate
 *   depends on the rows of its key after it (sorted on disk); with `last`, a pass after the send only when accepted
 *   keys repeat across batches, up to the last of those lines;
 * - import: after the job, a pass for the original fields of the rows it named (the rejects CSV), one more to reject
 *   every row of a failed job, and a new send pass for a job resubmitted without the rows the failed one named.
 */
import { rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ApiError, API_ERROR_CODES } from '../../api/errors.ts';
import type { ApiClient } from '../../api/client.ts';
import type { Clock } from '../../clock.ts';
import type { Entity } from '../../api/schemas/index.ts';
import type { Logger } from '../../log.ts';
import { dropClaim, doneUnderOtherMapping, type PushFile } from '../../store/push-ledger.ts';
import { claimFile, duplicateNote, recoverClaim, remappedNote, type ClaimSource } from './claim.ts';
import { crashedAgentError, DEATHS_BEFORE_SET_ASIDE } from './crashed-agent.ts';
import { sendBulk } from '../send/bulk-send.ts';
import { writeFileAtomic } from '../../atomic-file.ts';
import { pathExists } from '../../path-exists.ts';
import { archiveDir, failedDir, freeName, moveFile, ownFolder, processingDir } from '../folders.ts';
import { ImportJobFailedError, sendImport } from '../send/import-send.ts';
import { FileFormatError, compileSource, readRows, type CompiledSource, type ReadOptions, type ReadSummary } from '../read/index.ts';
import { nameForTemplates, tieFix } from './rejects-fix.ts';
import { writeReport, type PushReport } from './report.ts';
import { finishedRows, RowsRejectedError, rowsVerdict, unreconciled } from './row-fate.ts';
import { FileRun } from './file-run.ts';
import type { DeltaSettings } from '../../config/delta-schema.ts';
import { HELD_ERROR_CODE, deltaFile, recordFullSend } from '../../store/delta-state.ts';
import {
  deleteMissing,
  dropSpareHalf,
  fileLineSeed,
  firstPass,
  MIN_SPLIT_BYTES,
  planDelta,
  prestartHalf,
  previewPathOf,
  recordHeld,
  sourceFingerprint,
  writeHeldPreview,
  type DeltaPlan,
} from '../delta/delta-plan.ts';
import type { EntityRecord, ReadInit, RowReader } from '../read/index.ts';
import type { StateDb } from '../../store/state-db.ts';

export interface PushDeps {
  readonly db: StateDb;
  readonly client: ApiClient;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Bulk batches in flight at once (api.max_connections). */
  readonly maxInFlight: number;
  readonly signal?: AbortSignal | undefined;
  readonly random?: () => number;
  /** Progress of the file being read (the CLI's progress bar). */
  readonly onProgress?: (progress: { bytesRead: number; totalBytes: number; rows: number }) => void;
  /** Test seam: delta push compares files from this size on in two halves on two threads (default MIN_SPLIT_BYTES). */
  readonly splitBytes?: number;
}

export interface PushSource extends ClaimSource {
  readonly read: CompiledSource | ReadOptions;
  /** Delta push (bulk sources): absent or disabled, every valid row is sent. */
  readonly delta?: DeltaSettings | undefined;
  /** The source's options as configured: delta fingerprints their mapping part (delta/fingerprint.ts). */
  readonly options?: Readonly<Record<string, unknown>> | undefined;
}

export interface PushOptions {
  /** Send the file even if the same content was done before (not a delta source: those compare every file). */
  readonly force?: boolean;
  /** Delta sources: send every row, as if nothing had been sent before (`push --full`). */
  readonly full?: boolean;
  /** Delta sources: a person released the file (`files release`): the brakes are not judged. */
  readonly released?: boolean;
}

export type FileResult =
  | { outcome: 'done' | 'failed' | 'duplicate'; file: PushFile; reportPath: string; rejectsPath: string | null }
  | { outcome: 'held'; file: PushFile; heldPath: string; previewPath: string; brakes: readonly string[] }
  | { outcome: 'deferred'; file: PushFile; error: { code: string; message: string }; retryAt: string }
  | { outcome: 'refused'; path: string; reason: string; reportPath: string }
  | { outcome: 'vanished'; path: string };

/** Longest wait before a deferred file is tried again. */
const MAX_RETRY_DELAY_MS = 15 * 60_000; // 15 min
const FIRST_RETRY_DELAY_MS = 30_000; // 30 s

/** Claims `path` from the source's inbox and pushes it. */
export async function pushFile(deps: PushDeps, source: PushSource, path: string, options: PushOptions = {}): Promise<FileResult> {
  // A large file of a delta source is compared in two halves: the second one's thread starts now and loads its modules
  // while the file is claimed (delta/spare-half.ts).
  const ahead = source.delta?.enabled === true && source.mode === 'bulk' && (await sizeOf(path)) >= (deps.splitBytes ?? MIN_SPLIT_BYTES) ? prestartHalf() : null;
  try {
    return await claimAndPush(deps, source, path, options);
  } finally {
    await dropSpareHalf(ahead);
  }
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0; // the claim says what is wrong with it
  }
}

async function claimAndPush(deps: PushDeps, source: PushSource, path: string, options: PushOptions): Promise<FileResult> {
  const compiled = compiledOf(source);
  const claiming = { ...source, nameIsData: compiled.readsFileName, mapping: sourceFingerprint(compiled.options, []) };
  const claim = await claimFile(deps.db, claiming, path, options);
  switch (claim.kind) {
    case 'vanished':
      return { outcome: 'vanished', path };
    case 'refused': {
      // Moved to failed/ first, then the begun claim's row dropped: a crash between them leaves a row whose file is
      // gone, which start-up closes as vanished.
      const refused = await refuse(deps, source, claim.claimed?.path ?? path, claim.reason);
      if (claim.claimed !== undefined) await dropClaim(deps.db, claim.claimed.fileId);
      return refused;
    }
    case 'duplicate':
      return finishOrDefer(deps, FileRun.claimed(deps.db, claim.file), 'duplicate', { duplicateOf: claim.duplicateOf });
    case 'claimed':
      return processRun(deps, source, FileRun.claimed(deps.db, claim.file), options);
  }
}

/** The pieces a delta push's send pass reads the file in (see processClaimed). */
const SKIPPING_READ_BYTES = 1024 * 1024;

/**
 * Pushes a file claimed earlier: one resumed after a restart or a deferral, retried or released. Its ledger row is
 * read once here, into the run's record (file-run.ts); nothing after reads it again.
 */
export async function processClaimed(deps: PushDeps, source: PushSource, fileId: number, options: PushOptions = {}): Promise<FileResult> {
  return processRun(deps, source, await FileRun.load(deps.db, fileId), options);
}

async function processRun(deps: PushDeps, source: PushSource, claimed: FileRun, options: PushOptions): Promise<FileResult> {
  let run = claimed;
  if (run.file.final_status !== null) return deferIfArchivingFails(deps, run, () => completeMove(deps, run));
  if (run.file.status === 'claiming') {
    const recovered = await recoverClaim(deps.db, run.file, compiledOf(source).readsFileName, source.comparesEveryFile === true);
    if (recovered.kind === 'vanished') {
      return finishOrDefer(deps, run, 'failed', { error: { code: 'FILE_VANISHED', message: 'the file disappeared before it was claimed' }, vanished: true });
    }
    // A claim completed now: no attempt ran on the file yet, so nothing of it is committed.
    if (recovered.kind === 'claimed' || recovered.kind === 'duplicate') run = FileRun.claimed(deps.db, recovered.file);
    if (recovered.kind === 'duplicate') return finishOrDefer(deps, run, 'duplicate', { duplicateOf: recovered.duplicateOf });
  }
  // A poison file is set aside, not resumed a third time (crashed-agent.ts).
  const crashes = await run.openAttempt();
  if (crashes >= DEATHS_BEFORE_SET_ASIDE) return finishOrDefer(deps, run, 'failed', { error: crashedAgentError(run.file, crashes) });
  if (crashes > 0) deps.logger.warn({ file: run.file.original_name, source: run.file.source, crashes }, 'resuming a file the agent died on; a second death in a row sets it aside in failed/');
  try {
    return await attemptClaimed(deps, source, run, options);
  } finally {
    // A state database that cannot record the end counts this attempt as a death: it errs towards setting aside.
    await run.closeAttempt().catch(() => undefined);
  }
}

/** One attempt on a claimed file: read, send, reconcile, report, archive (or defer). */
async function attemptClaimed(deps: PushDeps, source: PushSource, run: FileRun, options: PushOptions): Promise<FileResult> {
  await run.markStarted();
  const fixed = await tieFix(deps.db, run);
  // What no step of the attempt changes (its id, names, paths, entity); the rest is read from run.file where used.
  const file = run.file;
  const name = await nameForTemplates(deps.db, file, fixed);
  let summary: ReadSummary | null = null;
  let notes: string[] = [];
  let compiled: CompiledSource;
  let plan: DeltaPlan | null = null;
  /** The reader opened for the header, which the file's first pass then reads on (the module's comment); null once taken. */
  let opened: RowReader<EntityRecord> | null = null;
  try {
    compiled = compiledOf(source);
    const entity = file.entity as Entity;
    const fixOfFix = fixed !== null && fixed.fixes_file_id !== null;
    const open = (init: ReadInit = {}) => readRows(file.processing_path, { ...compiled, entity }, { name, fixOfFix, ...init });
    const compares = file.mode === 'bulk' && source.delta?.enabled === true;
    if (file.mode === 'bulk' && entity === 'products') {
      // Opened as the first pass reads the file: the delta's comparison, or the send pass.
      opened = await open(compares ? { unvalidated: true } : {});
      notes = customColumnsNote(opened.header.customColumns);
      if (notes.length > 0) {
        await run.setMode('import');
        // An import is not compared: its send pass validates every row, which a comparison's reader does not.
        if (compares) {
          opened.close();
          opened = null;
        }
      }
    }
    const delta = run.file.mode === 'bulk' && source.delta?.enabled === true ? source.delta : null;
    if (delta !== null) {
      // The first pass: the file compared with what its source sent before, the brakes judged, nothing sent yet.
      // Its rows are converted, not validated: a row found unchanged was valid when the API accepted it.
      const first = opened ?? (await open({ unvalidated: true }));
      opened = null;
      try {
        // A corrected rejects CSV holds a few rows, never the full export: the keys it lacks are not missing.
        const settings = first.header.fixFile ? { ...delta, snapshot: false } : delta;
        // A large file is compared in two halves on two threads where that is exact (delta/two-halves.ts).
        const onFallback = (reason: string) => deps.logger.debug({ file: file.original_name, reason }, 'compared on one thread');
        const onMergeFallback = (reason: string) => deps.logger.debug({ file: file.original_name, reason }, 'merged on one thread');
        const halves = { file: file.processing_path, compiled, entity, name, header: first.header, open, whole: first, onFallback, onMergeFallback };
        const pass = await firstPass(deps.splitBytes === undefined ? halves : { ...halves, minBytes: deps.splitBytes });
        // The file's line hashes: remembered with the rows the API accepts; a large file is compared by them first.
        const seed = fileLineSeed(compiled, first.header, name);
        const line = seed === null ? null : { seed, file: file.processing_path, reread: open };
        const onLineFallback = (reason: string) => deps.logger.debug({ file: file.original_name, reason }, 'compared by content');
        const onLineMode = (counts: { rows: number; undecided: number }) => deps.logger.debug({ file: file.original_name, ...counts }, 'compared line by line');
        const deltaSource = { name: source.name, entity, delta: settings, options: source.options ?? {}, duplicateKeys: compiled.duplicateKeys, line };
        plan = await planDelta({ db: deps.db, clock: deps.clock, onLineFallback, onLineMode }, deltaSource, run.file, first, options, pass);
      } finally {
        first.close();
      }
      if (plan.tripped.length > 0) return await holdOrDefer(deps, run, plan, open);
    }
    // The send pass maps and validates only the rows it may send (ReadInit.unmapped), and leaves the lines of rows it
    // will not send unsplit where it can (ReadInit.unread), in large pieces: where most lines are skipped as bytes, the
    // reading itself is what it waits for.
    const reader = opened ?? (await open(plan === null ? {} : { unmapped: plan.unmapped, unread: plan.unread, highWaterMark: SKIPPING_READ_BYTES }));
    opened = null;
    const progress = deps.onProgress ? setInterval(() => deps.onProgress?.(reader.progress()), 200) : null;
    try {
      if (run.file.mode === 'import') {
        const header = { customColumns: reader.header.customColumns, duplicateKeys: compiled.duplicateKeys };
        await sendImport({ ...deps, signal: deps.signal }, run, reader, header, open);
      } else {
        // A resumed file's probation starts from the rows its committed batches had accepted (none for a new claim).
        const { accepted: acceptedBefore, batches: batchesBefore } = await run.counts();
        const target = { id: file.id, entity, batchSize: file.batch_size, duplicateKeys: compiled.duplicateKeys, fates: plan?.fates, acceptedBefore, batchesBefore };
        run.committingRows();
        await sendBulk({ ...deps, signal: deps.signal }, target, reader.chunks(), open);
        if (plan?.deletions) {
          // A row rejected here was not compared: its key cannot be told from a key the snapshot lacks, and deleting
          // it would delete a row the file holds. Nothing is deleted until a file arrives without such rows; the
          // missing CSV still lists the keys the comparison did not find.
          const rejected = reader.summary().rejected;
          if (rejected === 0) await deleteMissing(deps, { id: file.id, entity, original_name: file.original_name }, plan.scope.id, plan.deletions);
          else notes = [...notes, notDeletedNote(rejected)];
          await rm(plan.deletions, { force: true });
        }
      }
    } finally {
      if (progress) clearInterval(progress);
      // Also when the send failed: a failed import job read the whole file first, and its report says how many rows.
      summary = reader.summary();
      reader.close();
    }
    deps.onProgress?.(reader.progress());
  } catch (error) {
    opened?.close();
    const failure = fileLevelFailure(error);
    // The run's record holds the ledger row as it is now (the job id recorded while the file was sent).
    if (failure) return finishOrDefer(deps, run, 'failed', { error: failure, summary, notes });
    return defer(deps, run, error);
  }
  // Read from the ledger, not tallied beside it: the equation checks what was committed (file-run.ts).
  const counts = await run.counts();
  // Every row read has one fate (row-fate.ts); anything else is a bug, and the file fails rather than hide it.
  const unaccounted = unreconciled(counts, summary.rows, summary.skipped);
  if (!summary.complete || unaccounted !== null) {
    const message = unaccounted ?? `the file was not read to its end (${summary.rows} rows read)`;
    return finishOrDefer(deps, run, 'failed', { error: { code: 'RECONCILIATION_FAILED', message }, summary, notes });
  }
  const verdict = rowsVerdict(counts, summary.rows, summary.skipped, compiled.rejectThreshold);
  if (verdict !== null) return finishOrDefer(deps, run, 'failed', { error: { code: verdict.code, message: verdict.message }, summary, notes });
  // A full send counts for delta.full_every once the file is through, whatever a restart made of it.
  if (plan?.mode === 'full') await recordFullSend(deps.db, plan.scope.id, new Date(deps.clock.now()).toISOString());
  return finishOrDefer(deps, run, 'done', { summary, missingCsv: plan?.missingCsv ?? null, notes });
}

/**
 * Custom product columns go through a CSV import whatever the source's mode: the API document promises them only
 * there, and a server may drop them from a JSON write or refuse it (docs/api-assumptions.md). Such a file is not
 * compared by delta push (a bulk feature): it is sent whole. The report says so.
 */
function customColumnsNote(customColumns: readonly string[]): string[] {
  if (customColumns.length === 0) return [];
  const names = customColumns.map((c) => `"${c}"`).join(', ');
  return [`custom column${customColumns.length === 1 ? '' : 's'} ${names} and the rest of the file went as a CSV import job, not as JSON bulk: the API document promises custom columns only through imports`];
}

/** Moves a file the brakes stopped to held/ with its preview (delta/hold.ts); a failure to do so defers it. */
async function holdOrDefer(deps: PushDeps, run: FileRun, plan: DeltaPlan, open: () => Promise<RowReader<Readonly<Record<string, unknown>>>>): Promise<FileResult> {
  const file = run.file;
  try {
    const now = new Date(deps.clock.now());
    const held = await writeHeldPreview(deps.db, file, plan, now, open);
    const message = `held by the brakes: ${plan.tripped.map((t) => t.message).join('; ')}`;
    const outcome = { status: 'failed', finalPath: held.heldPath, error: { code: HELD_ERROR_CODE, message } } as const;
    await run.prepareFinish(outcome);
    await moveFile(file.processing_path, held.heldPath);
    await run.finish(outcome);
    await recordHeldFile(deps.db, file.id, held.heldPath, now);
    if (plan.missingCsv !== null) await rm(plan.missingCsv, { force: true });
    if (plan.deletions !== null) await rm(plan.deletions, { force: true });
    deps.logger.warn(
      { file: file.original_name, source: file.source, entity: file.entity, held_to: held.heldPath, preview: held.previewPath, brakes: plan.tripped.map((t) => t.brake) },
      `file held: ${plan.tripped.map((t) => t.message).join('; ')}; nothing was sent. Release it with: ${held.preview.release}`,
    );
    return { outcome: 'held', file: run.file, heldPath: held.heldPath, previewPath: held.previewPath, brakes: plan.tripped.map((t) => t.message) };
  } catch (error) {
    deps.logger.error({ file: file.original_name, source: file.source, error: String(error) }, 'the file could not be moved to held/; it stays in processing/');
    return defer(deps, run, error);
  }
}

function compiledOf(source: PushSource): CompiledSource {
  return 'compiled' in source.read ? source.read : compileSource(source.read);
}

/** The error that fails the file for good, or null for one that only defers it. */
function fileLevelFailure(error: unknown): { code: string; message: string } | null {
  if (error instanceof FileFormatError) {
    const where = error.line !== undefined ? ` (line ${error.line}${error.byteOffset !== undefined ? `, byte ${error.byteOffset}` : ''})` : '';
    return { code: error.code, message: `${error.message}${where}` };
  }
  if (error instanceof ImportJobFailedError || error instanceof RowsRejectedError) return { code: error.code, message: error.message };
  if (error instanceof ApiError) {
    // Retrying cannot fix a request the API refuses as a whole (422, 404, a body off the contract).
    const transient = error.retryable || error.code === API_ERROR_CODES.keyRejected || error.code === API_ERROR_CODES.aborted;
    return transient ? null : { code: error.code, message: error.message };
  }
  return null; // I/O (disk full, read-only state), a drain: the file waits in processing/
}

async function defer(deps: PushDeps, run: FileRun, error: unknown): Promise<FileResult> {
  const file = run.file;
  const code = error instanceof ApiError ? error.code : ((error as { code?: unknown }).code as string | undefined) ?? 'DEFERRED';
  const message = fileSystemSentence(error) ?? (error instanceof Error ? error.message : String(error));
  const delay = Math.min(MAX_RETRY_DELAY_MS, FIRST_RETRY_DELAY_MS * 2 ** Math.max(0, file.attempts - 1));
  const retryAt = new Date(deps.clock.now() + delay).toISOString();
  try {
    await run.defer(retryAt, { code, message });
  } catch (stateError) {
    // The state database itself may be the problem (disk full, read-only): the file stays in processing/ anyway.
    deps.logger.error({ file: file.original_name, error: String(stateError) }, 'could not record the deferral');
  }
  deps.logger.warn({ file: file.original_name, source: file.source, error_code: code, error: message, retry_at: retryAt }, 'file deferred; it stays in processing and is tried again');
  return { outcome: 'deferred', file: run.file, error: { code, message }, retryAt };
}

/** Why a snapshot's missing keys were not deleted: rows of the file were rejected (their keys may be among them). */
function notDeletedNote(rejected: number): string {
  return `missing: delete deleted nothing: ${rejected} row(s) of the file were rejected, and a rejected row's key cannot be told from a missing one; the missing CSV lists the keys not found, rejected rows' included. Fix the rows and drop the file again to delete what is really missing`;
}

/**
 * A file-system error of the agent's own writes (the report, the rejects, a move), as what to do about it: the
 * operator sees it in `status`, the console and the log. Undefined for any other error.
 */
function fileSystemSentence(error: unknown): string | undefined {
  const { code, path, dest } = error as { code?: unknown; path?: unknown; dest?: unknown };
  // A rename names its source in `path` and its target in `dest`: the target's folder is the one written to.
  const target = typeof dest === 'string' ? dest : typeof path === 'string' ? path : null;
  const where = target === null ? "the inbox's folders" : dirname(target);
  switch (code) {
    case 'ENOSPC':
    case 'EDQUOT':
      return `the disk of ${where} is full (${code}): free space there; the file stays in processing/ and is tried again`;
    case 'EROFS':
      return `${where} is on a read-only file system (EROFS): mount it writable; the file stays in processing/ and is tried again`;
    case 'EACCES':
    case 'EPERM':
      return `the agent's user is not allowed to use ${target ?? where} (${code}): give it read and write access; the file stays in processing/ and is tried again`;
    default:
      return undefined;
  }
}

interface FinishInput {
  /** Delta push: the missing keys of a snapshot (a CSV in processing/), moved next to the report. */
  missingCsv?: string | null;
  error?: { code: string; message: string };
  summary?: ReadSummary | null;
  duplicateOf?: PushFile;
  /** The file is gone (a claim cut short, then the file removed): only the report is written, nothing is moved. */
  vanished?: boolean;
  /** Said in the report's warnings after the reader's (how the file was sent, when not as its source says). */
  notes?: readonly string[];
}

/** Writes the report next to the file's final place, records the move, moves the file, closes the ledger row. */
async function finish(deps: PushDeps, run: FileRun, status: 'done' | 'failed' | 'duplicate', input: FinishInput): Promise<FileResult> {
  const file = run.file;
  const now = new Date(deps.clock.now());
  const dir = status === 'failed' ? failedDir(file.inbox) : archiveDir(file.inbox, now);
  const finalPath = await freeName(dir, file.original_name, file.id);
  const counts = status === 'duplicate' ? null : await run.counts();
  const delta = (await deltaFile(deps.db, file.id)) ?? null;
  const fixes = await run.fixedFile();
  // Why the content was sent, or not, again: asked of the ledger here, so a file resumed after a crash says it too.
  const remappedFrom = status === 'duplicate' ? null : await doneUnderOtherMapping(deps.db, file);
  const claimNotes = [
    ...(input.duplicateOf === undefined ? [] : [duplicateNote(file, input.duplicateOf, finalPath)]),
    ...(remappedFrom === null ? [] : [remappedNote(remappedFrom)]),
  ];
  const { reportPath, rejectsPath, report } = await ownFolder(file.inbox, dir).then(() =>
    writeReport(deps.db, {
      file,
      status,
      finalPath,
      finishedAt: now.toISOString(),
      counts,
      rowsRead: input.summary?.complete === true ? input.summary.rows : null,
      skipped: input.summary?.complete === true ? input.summary.skipped : null,
      blankLines: input.summary?.blankLines ?? null,
      headers: input.summary?.headers ?? null,
      delimiter: input.summary?.delimiter ?? null,
      sheet: input.summary?.sheet ?? null,
      warnings: [...claimNotes, ...(input.summary?.warnings ?? []), ...(input.notes ?? [])],
      error: input.error ?? null,
      duplicateOf: input.duplicateOf ?? null,
      delta,
      missingPath: input.missingCsv ? `${finalPath}.missing.csv` : null,
      fixes,
    }),
  );
  if (input.missingCsv) await moveFile(input.missingCsv, `${finalPath}.missing.csv`);
  await run.prepareFinish({ status, finalPath, error: input.error ?? null, duplicateOf: input.duplicateOf?.id ?? null });
  if (input.vanished !== true) {
    // Renamed or deleted in processing/ by someone else while it was read (the open file was read to the end, so
    // its rows are sent and reported): nothing to move. Before, the move's ENOENT left the row open until a restart.
    if (await pathExists(file.processing_path)) await moveFile(file.processing_path, finalPath);
    else deps.logger.error({ file: file.original_name, source: file.source, processing_path: file.processing_path }, 'the file was removed from processing/ while it was read; every row was read and its report is written, the file itself could not be archived');
  }
  await run.finish({
    status,
    finalPath,
    rowsRead: input.summary?.complete === true ? input.summary.rows : null,
    rowsSkipped: input.summary?.complete === true ? input.summary.skipped : null,
    ...(counts ? { rows: finishedRows(counts) } : {}),
    error: input.error ?? null,
    duplicateOf: input.duplicateOf?.id ?? null,
  });
  await rm(join(processingDir(file.inbox), `.${file.id}-canonical.csv`), { force: true });
  logOutcome(deps.logger, run.file, report);
  return { outcome: status, file: run.file, reportPath, rejectsPath };
}

/**
 * `finish`, or a deferral when the report or the move fails (archive/ or failed/ unwritable, the disk full): the
 * file stays in processing/ with its committed results and a clear error, and is tried again at its retry time
 * without sending anything twice. Before, such an error escaped as "push failed unexpectedly" and the file waited
 * for the next restart.
 */
async function finishOrDefer(deps: PushDeps, run: FileRun, status: 'done' | 'failed' | 'duplicate', input: FinishInput): Promise<FileResult> {
  return deferIfArchivingFails(deps, run, () => finish(deps, run, status, input));
}

async function deferIfArchivingFails(deps: PushDeps, run: FileRun, archive: () => Promise<FileResult>): Promise<FileResult> {
  try {
    return await archive();
  } catch (error) {
    deps.logger.error({ file: run.file.original_name, source: run.file.source, error: String(error) }, 'the file could not be archived (report or move failed); it stays in processing/');
    return defer(deps, run, error);
  }
}

/** The delta record of a held file says where it waits for `files release`. */
async function recordHeldFile(db: StateDb, fileId: number, heldPath: string, heldAt: Date): Promise<void> {
  const record = await deltaFile(db, fileId);
  if (record) await recordHeld(db, record, heldPath, heldAt.toISOString());
}

/**
 * A crash after the move and before the ledger was closed: close it now, with the outcome prepareFinish recorded
 * (the status, the error, the file it duplicates), as the report beside the file says.
 */
async function completeMove(deps: PushDeps, run: FileRun): Promise<FileResult> {
  const file = run.file;
  const status = file.final_status ?? 'failed';
  const finalPath = file.final_path ?? '';
  // Neither at its final place nor in processing/: a vanished file whose report was written; nothing to move.
  if (!(await pathExists(finalPath)) && (await pathExists(file.processing_path))) await moveFile(file.processing_path, finalPath);
  const error = file.error_code === null ? null : { code: file.error_code, message: file.error_message ?? '' };
  const rows = status === 'duplicate' ? {} : { rows: finishedRows(await run.counts()) };
  await run.finish({ status, finalPath, rowsRead: file.rows_read, ...rows, error, duplicateOf: file.duplicate_of });
  const held = error?.code === HELD_ERROR_CODE;
  if (held) await recordHeldFile(deps.db, file.id, finalPath, new Date(deps.clock.now()));
  if (held) return { outcome: 'held', file: run.file, heldPath: finalPath, previewPath: previewPathOf(finalPath), brakes: [error.message] };
  return { outcome: status, file: run.file, reportPath: `${finalPath}.report.json`, rejectsPath: null };
}

/** A file the agent will not read (a symlink out of the inbox): moved to failed/ with a report; no row is read. */
async function refuse(deps: PushDeps, source: PushSource, path: string, reason: string): Promise<FileResult> {
  const dir = failedDir(source.inbox);
  await ownFolder(source.inbox, dir);
  const finalPath = await freeName(dir, basename(path), deps.clock.now());
  const reportPath = `${finalPath}.report.json`;
  const report = { file: basename(path), source: source.name, entity: source.entity, status: 'refused', error: { code: 'FILE_REFUSED', message: reason } };
  await writeFileAtomic(reportPath, [`${JSON.stringify(report, null, 2)}\n`]);
  await moveFile(path, finalPath);
  deps.logger.error({ file: basename(path), source: source.name, reason }, 'file refused');
  return { outcome: 'refused', path, reason, reportPath };
}

/**
 * The file's one line at the end: the counts are the report's own (`rows`, the same object), so the log and the
 * report never disagree. A file with rejected rows is a WARN: someone has rows to fix.
 */
function logOutcome(logger: Logger, file: PushFile, report: PushReport): void {
  const fields = {
    file: file.original_name,
    source: file.source,
    entity: file.entity,
    mode: file.mode,
    status: report.status,
    rows: report.rows ?? undefined,
    job_id: file.job_id ?? undefined,
    archived_to: file.final_path,
    ...(report.fixes === undefined ? {} : { fixes_file: report.fixes.file }),
    ...(report.rejects_file === null ? {} : { rejects_file: report.rejects_file }),
    ...(report.error ? { error_code: report.error.code, error: report.error.message } : {}),
  };
  if (report.status === 'failed') logger.error(fields, 'file failed');
  else if (report.status === 'duplicate') logger.info(fields, 'file skipped: same content already sent');
  else if ((report.rows?.rejected ?? 0) > 0) logger.warn(fields, 'file done with rejected rows');
  else logger.info(fields, 'file done');
}
