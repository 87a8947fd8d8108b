/**
 * Import mode: the mapped, validated rows are written as a canonical UTF-8 CSV, uploaded as an import job (part
 * `file`), and the job is polled at the spec's pace (5-10 s running, 30-60 s queued) until it completes or fails.
 *
 * What survives a crash: the job id is committed as soon as the API accepted the upload; from then on the file is
 * resumed by polling that job, never by uploading again. A crash during the upload (before the id is committed)
 * uploads again: the spec says to retry a failed upload, and an import writes by business key, so a second job with
 * the same rows writes nothing twice. A failed job that named every row it refused is replaced, once, by a new job
 * without them (those rows are rejects at their line in the user's file); any other failed job fails the file with
 * its detail, every row sent in the rejects.
 */
import { join } from 'node:path';
import type { ApiClient } from '../../api/client.ts';
import { JOB_POLL_QUEUED_MS, JOB_POLL_RUNNING_MS, type Entity, type Job, type JobFailedRow, type JobHandle } from '../../api/schemas/index.ts';
import type { Clock } from '../../clock.ts';
import type { Logger } from '../../log.ts';
import { forgetJobPoll, jobPollOf, recordJobPoll } from '../../store/api-state.ts';
import type { StateDb } from '../../store/state-db.ts';
import { apiRejectedLines, commitBatch, committedBatches, recordRejects, type RejectRow } from '../../store/push-ledger.ts';
import type { EntityRecord, RowOutcome } from '../read/index.ts';
import type { DuplicateKeyPolicy } from '../../config/mapping-schema.ts';
import { firstPassDecisions, loserRow, type ReopenRows } from '../file/duplicate-keys.ts';
import { Probation, localReject, stoppedEarly } from '../file/row-fate.ts';
import type { FileRun } from '../file/file-run.ts';
import { CanonicalCsvWriter } from '../write/canonical-csv.ts';
import { processingDir } from '../folders.ts';

export interface ImportSendContext {
  readonly db: StateDb;
  readonly client: ApiClient;
  readonly clock: Clock;
  readonly random?: () => number;
  readonly signal?: AbortSignal | undefined;
  /** Called on every poll (status output, logs). */
  readonly onPoll?: (job: Job) => void;
  readonly logger?: Logger;
}

/**
 * A job that ended in `failed`: the file fails, its report naming the rows the job refused by their line in the
 * user's file, or saying that the server named none (the detail's shape is not shown in the document).
 */
export class ImportJobFailedError extends Error {
  readonly code = 'IMPORT_JOB_FAILED';
  readonly job: Job;
  constructor(job: Job, named: readonly number[], sent: number) {
    super(`import job ${job.job_id} failed: ${failureWords(job, named, sent)}`);
    this.name = 'ImportJobFailedError';
    this.job = job;
  }
}

/** What a failed job said, in one sentence: the rows it named (user's lines), a count, its message, or nothing. */
function failureWords(job: Job, named: readonly number[], sent: number): string {
  const detail = job.detail;
  const message = detail.kind === 'none' ? null : detail.message;
  const failed = detail.kind === 'list' || detail.kind === 'sample' ? (detail.failed ?? detail.rows.length) : detail.kind === 'counts' ? detail.failed : null;
  const lines = named.length > 0 ? ` (line${named.length === 1 ? '' : 's'} ${listLines(named)} of the file${detail.kind === 'sample' ? ', a sample the server gave' : ''}; reasons in the rejects)` : '';
  // A count of 0 on a failed job says nothing about rows (the job failed as a whole: its message says why).
  const rows = failed !== null && failed > 0 ? `${failed} of ${sent} rows refused${lines}` : null;
  const said = [rows, message].filter((part) => part !== null).join('; ');
  const none = `the server gave no detail of which rows it refused; none of the ${sent} rows sent is counted as written`;
  return said === '' ? none : `${said}; none of the ${sent} rows sent is counted as written`;
}

function listLines(lines: readonly number[]): string {
  const shown = lines.slice(0, 10).join(', ');
  return lines.length > 10 ? `${shown} and ${lines.length - 10} more` : shown;
}

/** Rejects are committed in groups of this many while the canonical CSV is written. */
const LOCAL_REJECT_FLUSH = 1000;

/** Canonical line -> source line, for a job's row errors. Rows are written in source order, so both increase. */
class LineMap {
  #canonical = new Uint32Array(1024);
  #source = new Uint32Array(1024);
  #size = 0;

  add(canonicalLine: number, sourceLine: number): void {
    if (this.#size === this.#canonical.length) {
      const grow = (a: Uint32Array) => {
        const b = new Uint32Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.#canonical = grow(this.#canonical);
      this.#source = grow(this.#source);
    }
    this.#canonical[this.#size] = canonicalLine;
    this.#source[this.#size] = sourceLine;
    this.#size += 1;
  }

  get rows(): number {
    return this.#size;
  }

  /** Whether a row of the source's line `sourceLine` was written (source lines increase with the rows). */
  hasSource(sourceLine: number): boolean {
    let lo = 0;
    let hi = this.#size - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const line = this.#source[mid] ?? 0;
      if (line === sourceLine) return true;
      if (line < sourceLine) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }

  /** The source line of the row that starts at or before `canonicalLine`, or null. */
  sourceLine(canonicalLine: number): number | null {
    let lo = 0;
    let hi = this.#size - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if ((this.#canonical[mid] ?? 0) <= canonicalLine) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found < 0 ? null : (this.#source[found] ?? null);
  }
}

const UPLOAD: Record<Entity, (client: ApiClient, path: string, signal?: AbortSignal) => Promise<JobHandle>> = {
  products: (c, p, signal) => c.products.import(p, { signal }),
  product_store: (c, p, signal) => c.productStore.import(p, { signal }),
  transactions: (c, p, signal) => c.transactions.import(p, { signal }),
  competitor_prices: (c, p, signal) => c.competitorPrices.import(p, { signal }),
};

/** Opens the source file again from its first row (a pass over the whole file, constant memory). */
export type Reopen = ReopenRows<EntityRecord>;

/** The original fields of the given lines, from one more pass over the source (for the rejects CSV). */
async function rawFieldsOf(reopen: Reopen, lines: ReadonlySet<number>): Promise<Map<number, readonly string[]>> {
  const found = new Map<number, readonly string[]>();
  if (lines.size === 0) return found;
  const reader = await reopen();
  try {
    for await (const outcome of reader) {
      if (lines.has(outcome.line)) found.set(outcome.line, outcome.rawFields);
      if (found.size === lines.size) break;
    }
  } finally {
    reader.close();
  }
  return found;
}

/**
 * Writes the canonical CSV of `rows` (recording local rejects), uploads it unless a job was already accepted for
 * this file, polls the job to its end and records its row errors. Throws ImportJobFailedError for a failed job, and
 * RowsRejectedError when the first rows are all rejected (row-fate.ts: nothing is uploaded). The file's status and job
 * id are written through its run, whose record the file's report then reads (file-run.ts).
 */
export async function sendImport(
  ctx: ImportSendContext,
  run: FileRun,
  rows: AsyncIterable<RowOutcome<EntityRecord>>,
  header: { customColumns: readonly string[]; duplicateKeys: DuplicateKeyPolicy },
  reopen: Reopen,
): Promise<void> {
  const file = run.file;
  // Known before this send commits anything: a new claim has no batch and no reject in the ledger to read back.
  const nothingCommitted = run.nothingCommitted;
  run.committingRows();
  const entity = file.entity as Entity;
  const { losers, merged } = await firstPassDecisions(reopen, entity, header.duplicateKeys);
  const probation = new Probation();
  let superseded = 0;
  const canonicalPath = join(processingDir(file.inbox), `.${file.id}-canonical.csv`);
  const writer = await CanonicalCsvWriter.create(canonicalPath, { entity, customColumns: header.customColumns });
  const lines = new LineMap();
  // Rows a failed job named, left out of the job that replaced it (resubmit below); none once the job's result is in.
  const excluded = nothingCommitted || (await committedBatches(ctx.db, file.id)).size > 0 ? new Set<number>() : await apiRejectedLines(ctx.db, file.id);
  let rejects: RejectRow[] = [];
  const record = async (reject: RejectRow): Promise<void> => {
    rejects.push(reject);
    if (rejects.length >= LOCAL_REJECT_FLUSH) {
      await recordRejects(ctx.db, file.id, rejects);
      rejects = [];
    }
  };
  try {
    for await (const outcome of rows) {
      if (outcome.kind === 'reject') {
        await record(localReject(outcome));
        probation.rejected(outcome.line);
        // Nothing valid so far and enough rejected: the file is stopped, nothing is uploaded.
        if (probation.failed) throw stoppedEarly(probation);
        continue;
      }
      const loser = losers.get(outcome.line);
      if (loser !== undefined) {
        await record(loserRow(entity, outcome.line, loser, outcome.rawFields));
        if (loser.fate === 'rejected') probation.rejected(outcome.line);
        else if (loser.fate === 'superseded') superseded += 1;
        continue;
      }
      probation.valid(outcome.line); // answered by the job, after the upload: the count stops here
      if (excluded.has(outcome.line)) continue;
      // `sum`: a key's first row goes with the sums of its rows (the others were merged into it above).
      const written = await writer.write((merged.get(outcome.line) as EntityRecord | undefined) ?? outcome.record);
      lines.add(written.line, outcome.line);
    }
  } catch (error) {
    await recordRejects(ctx.db, file.id, rejects);
    await writer.abort();
    throw error;
  }
  await recordRejects(ctx.db, file.id, rejects);
  const canonical = await writer.commit();
  const empty = { index: 0, firstLine: 0, lastLine: 0, sent: 0, accepted: 0, failed: 0, superseded };
  let jobId = file.job_id;
  if (jobId === null) {
    if (lines.rows === 0) {
      // Nothing valid to send: no job. The file is done with every row rejected or superseded.
      await commitBatch(ctx.db, file.id, empty, []);
      return;
    }
    await run.setStatus('uploading');
    // Not given the drain signal: an upload in flight finishes, so its job id is recorded and never uploaded twice.
    jobId = (await UPLOAD[entity](ctx.client, canonical.path)).job_id;
    await run.recordJob(jobId);
  }
  const job = await pollJob(ctx, jobId);
  const sent = lines.rows + excluded.size;
  const named = await rejectsNamedBy(job, lines, reopen);
  if (job.phase === 'failed') {
    if (excluded.size === 0 && mayResubmit(entity, job, named, lines.rows)) {
      // The document: "if the job later fails, fix the CSV and submit a new job". The job named every row it
      // refused: those become rejects, and the rest goes as a new job (once; never for competitor prices, which a
      // failed job may have written in part and a new job would create again).
      const first = job.job_id;
      const refused = named.map((r) => ({ ...r, message: `${r.message} (refused by import job ${first}; the other rows went as a new job)` }));
      await run.recordResubmission(refused);
      ctx.logger?.warn({ file: file.original_name, job_id: first, refused: refused.length, rows: lines.rows - refused.length }, 'import job failed on rows it named: they are rejects, the rest goes as a new job');
      const again = await reopen();
      try {
        // The run's record now has no job (recordResubmission cleared it): the new job is uploaded.
        return await sendImport(ctx, run, again, header, reopen);
      } finally {
        again.close();
      }
    }
    // Nothing of a failed job is counted as written: every row sent is in the rejects, those the job named with
    // its reason, the others as not written.
    const error = new ImportJobFailedError(job, named.map((r) => r.line), lines.rows);
    const rest = await rejectEverySentRow(ctx.db, file.id, lines, named, reopen, `not written: ${error.message}`);
    await commitBatch(ctx.db, file.id, { ...empty, sent, accepted: 0, failed: sent }, rest);
    throw error;
  }
  const failed = excluded.size + (job.rows_failed ?? named.length);
  await commitBatch(ctx.db, file.id, { ...empty, sent, accepted: job.rows_ok ?? sent - failed, failed }, named);
}

/**
 * Whether a failed job may be replaced by a new one without the rows it refused: it named each of them (a list,
 * not a sample, every entry at a line of the file sent), some rows are left, and the entity is keyed (a competitor
 * price import creates rows: a failed job may have written some, which a second job would create again).
 */
function mayResubmit(entity: Entity, job: Job, named: readonly RejectRow[], rowsInJob: number): boolean {
  const detail = job.detail;
  if (entity === 'competitor_prices' || detail.kind !== 'list') return false;
  const everyOne = named.length === detail.rows.length && (detail.failed === null || detail.failed === named.length);
  return everyOne && named.length > 0 && named.length < rowsInJob;
}

/**
 * Records a reject for every row sent in the job (one more pass over the source, rejects committed in groups),
 * `named` ones as the job named them; returns the last group, for the caller to commit with the counts.
 */
async function rejectEverySentRow(
  db: StateDb,
  fileId: number,
  lines: LineMap,
  named: readonly RejectRow[],
  reopen: Reopen,
  message: string,
): Promise<RejectRow[]> {
  const byLine = new Map(named.map((r) => [r.line, r]));
  let group: RejectRow[] = [];
  const reader = await reopen();
  try {
    for await (const outcome of reader) {
      if (!lines.hasSource(outcome.line)) continue;
      group.push(byLine.get(outcome.line) ?? { line: outcome.line, stage: 'api', field: null, code: 'not_written', message, raw: outcome.rawFields });
      if (group.length >= LOCAL_REJECT_FLUSH) {
        await recordRejects(db, fileId, group);
        group = [];
      }
    }
  } finally {
    reader.close();
  }
  return group;
}

/**
 * The rows a job record names as refused (jobs.ts: jobFailureDetail, whatever the shape), as rejects at their line
 * in the user's file, with their original fields. A named line the canonical file does not have is left out.
 */
async function rejectsNamedBy(job: Job, lines: LineMap, reopen: Reopen): Promise<RejectRow[]> {
  const detail = job.detail;
  const rows: JobFailedRow[] = detail.kind === 'list' || detail.kind === 'sample' ? detail.rows : [];
  const refused = rows.flatMap((row) => {
    const sourceLine = row.line === null ? null : lines.sourceLine(row.line);
    return sourceLine === null ? [] : [{ ...row, sourceLine }];
  });
  const raw = await rawFieldsOf(reopen, new Set(refused.map((e) => e.sourceLine)));
  return refused.map((e) => ({
    line: e.sourceLine,
    stage: 'api',
    field: null,
    code: e.code ?? 'refused',
    message: e.message,
    raw: raw.get(e.sourceLine) ?? [],
  }));
}

/**
 * Polls until the job completes or fails (its phase: a server may name statuses otherwise, jobs.ts): every 5-10 s
 * while running, every 30-60 s while queued or in a status the agent does not know. The time of the next poll is
 * kept in the state database (api-state.ts), so an agent restarted while a job waits polls it when it is due, not
 * at once (issue 11, failure 8).
 */
export async function pollJob(ctx: ImportSendContext, jobId: string): Promise<Job> {
  const random = ctx.random ?? Math.random;
  const due = await jobPollOf(ctx.db, jobId);
  if (due !== undefined && due.untilMs > ctx.clock.now()) await ctx.clock.sleep(due.untilMs - ctx.clock.now(), ctx.signal);
  for (;;) {
    const job = await ctx.client.jobs.get(jobId, { signal: ctx.signal });
    ctx.onPoll?.(job);
    if (job.phase === 'completed' || job.phase === 'failed') {
      await forgetJobPoll(ctx.db, jobId);
      return job;
    }
    const pace = job.phase === 'running' ? JOB_POLL_RUNNING_MS : JOB_POLL_QUEUED_MS;
    const wait = pace.min + Math.floor(random() * (pace.max - pace.min));
    await recordJobPoll(ctx.db, jobId, job.status, ctx.clock.now() + wait);
    await ctx.clock.sleep(wait, ctx.signal);
  }
}
