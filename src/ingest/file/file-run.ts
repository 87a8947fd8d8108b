/**
 * The record of one file's run through the pipeline (claim, read, decide, send, record, report): its ledger row, its
 * row counts and the file it fixes, kept in memory from the claim on. Each step writes the ledger through the run,
 * and the run keeps the row as the write committed it (the UPDATE's RETURNING: no rule of the ledger is copied here,
 * and no step reads the row back after another).
 *
 * What survives a crash: the ledger, never this record. Every change is committed to push_files before the record
 * takes it, so the record is never ahead of the ledger; if the agent dies anywhere, the record dies with it and the
 * next start builds a new one from the row (`FileRun.load`: unfinished files, `files retry`), then resumes from what
 * was committed (push-ledger.ts's checkpoint rule). Nothing else writes a file's row while its run is under way:
 * one pipeline owns a file in processing/ (under HA, only the active node's).
 *
 * Counts are the exception to "kept, never read": the send commits batches and rejects the run does not tally, and the
 * file's verdict and reconciliation are checked against the ledger itself, not against a tally kept beside it. So
 * they are known without a read only where nothing was committed since the last read (a new claim has none), and
 * read once after the send.
 */
import {
  closeAttempt,
  deferFile,
  finishFile,
  getFile,
  markStarted,
  openAttempt,
  prepareFinish,
  recordJob,
  recordResubmission,
  setFixes,
  setMode,
  setStatus,
  type FileOutcome,
  type PushFile,
  type PreparedFinish,
  type PushStatus,
  type RejectRow,
} from '../../store/push-ledger.ts';
import type { StateDb } from '../../store/state-db.ts';
import { fileCounts, type FileCounts } from './row-fate.ts';

/** A new claim's counts: nothing committed yet. */
const NOTHING_COMMITTED: FileCounts = { batches: 0, sent: 0, accepted: 0, rejectedByApi: 0, rejectedLocally: 0, superseded: 0, merged: 0, unchanged: 0, rejectsListed: 0 };

export class FileRun {
  readonly db: StateDb;
  #file: PushFile;
  /** The counts as the ledger holds them; null once rows were committed since they were known. */
  #counts: FileCounts | null;
  /** The file whose rejects this one fixes (null: none); undefined until asked or tied. */
  #fixes: PushFile | null | undefined;

  private constructor(db: StateDb, file: PushFile, counts: FileCounts | null) {
    this.db = db;
    this.#file = file;
    this.#counts = counts;
  }

  /** The run of a file just claimed, from the row its claim committed: no batch or reject of it exists yet. */
  static claimed(db: StateDb, file: PushFile): FileRun {
    return new FileRun(db, file, NOTHING_COMMITTED);
  }

  /** The run of a file claimed earlier (resumed, retried, released): its row read once; its counts when needed. */
  static async load(db: StateDb, id: number): Promise<FileRun> {
    return new FileRun(db, committed(await getFile(db, id), id), null);
  }

  /** The file's ledger row as the last write of this run committed it. */
  get file(): Readonly<PushFile> {
    return this.#file;
  }

  get id(): number {
    return this.#file.id;
  }

  /** The file's row counts as the ledger holds them now (read only when rows were committed since last known). */
  async counts(): Promise<FileCounts> {
    this.#counts ??= await fileCounts(this.db, this.id);
    return this.#counts;
  }

  /**
   * The ledger is known to hold no batch and no reject of this file: a new claim before its send, which then has no
   * rows a failed job named to read back (import-send.ts). A run loaded from the ledger reads them.
   */
  get nothingCommitted(): boolean {
    return this.#counts === NOTHING_COMMITTED;
  }

  /** A step is about to commit rows (batches, rejects): the counts known so far stop being the ledger's. */
  committingRows(): void {
    this.#counts = null;
  }

  /** The file this one fixes (rejects-fix.ts), or null. */
  async fixedFile(): Promise<PushFile | null> {
    if (this.#fixes === undefined) {
      const id = this.#file.fixes_file_id;
      this.#fixes = id === null ? null : ((await getFile(this.db, id)) ?? null);
    }
    return this.#fixes;
  }

  /** Ties the file to the one whose rejects it fixes. */
  async setFixes(fixed: PushFile): Promise<void> {
    this.#take(await setFixes(this.db, this.id, fixed.id));
    this.#fixes = this.#file.fixes_file_id === fixed.id ? fixed : undefined;
  }

  /** An attempt begins; resolves to the deaths in a row it follows (crashed-agent.ts). */
  async openAttempt(): Promise<number> {
    this.#take(await openAttempt(this.db, this.id));
    return Number(this.#file.crashes);
  }

  /**
   * The attempt ended without the agent dying. Not kept in the record: the result handed back was taken at the
   * file's finish (or deferral), before the attempt closed.
   */
  async closeAttempt(): Promise<void> {
    await closeAttempt(this.db, this.id);
  }

  async markStarted(): Promise<void> {
    this.#take(await markStarted(this.db, this.id));
  }

  async setMode(mode: 'bulk' | 'import'): Promise<void> {
    this.#take(await setMode(this.db, this.id, mode));
  }

  async setStatus(status: PushStatus): Promise<void> {
    this.#take(await setStatus(this.db, this.id, status));
  }

  async recordJob(jobId: string): Promise<void> {
    this.#take(await recordJob(this.db, this.id, jobId));
  }

  async recordResubmission(rejects: readonly RejectRow[]): Promise<void> {
    this.committingRows();
    this.#take(await recordResubmission(this.db, this.id, rejects));
  }

  async defer(nextAttemptAt: string, error: { code: string; message: string }): Promise<void> {
    this.#take(await deferFile(this.db, this.id, nextAttemptAt, error));
  }

  async prepareFinish(outcome: PreparedFinish): Promise<void> {
    this.#take(await prepareFinish(this.db, this.id, outcome));
  }

  async finish(outcome: FileOutcome): Promise<void> {
    this.#take(await finishFile(this.db, this.id, outcome));
  }

  #take(row: PushFile | undefined): void {
    this.#file = committed(row, this.id);
  }
}

/** The file's row as a ledger write or read gave it: there is none only if someone deleted it meanwhile. */
export function committed(file: PushFile | undefined, id: number): PushFile {
  if (!file) throw new Error(`push ledger has no file ${id}`);
  return file;
}
