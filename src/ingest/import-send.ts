/**
 * Import mode: the mapped, validated rows are written as a canonical UTF-8 CSV, uploaded as an import job (part
 * `file`), and the job is polled at the spec's pace (5-10 s running, 30-60 s queued) until it completes or fails.
 *
 * What survives a crash: the job id is committed as soon as the API accepted the upload; from then on the file is
 * resumed by polling that job, never by uploading again. A crash during the upload (before the id is committed)
 * uploads again: the spec says to retry a failed upload, and an import writes by business key, so a second job with
 * the same rows writes nothing twice. A failed job fails the file with the job's detail and is never resubmitted.
 */
import { join } from 'node:path';
import type { ApiClient } from '../api/client.ts';
import { JOB_POLL_QUEUED_MS, JOB_POLL_RUNNING_MS, type Entity, type Job, type JobHandle } from '../api/schemas/index.ts';
import type { Clock } from '../clock.ts';
import type { StateDb } from '../store/state-db.ts';
import { commitBatch, recordJob, recordRejects, setStatus, type PushFile, type RejectRow } from '../store/push-ledger.ts';
import type { EntityRecord, RowOutcome } from './read/index.ts';
import type { DuplicateKeyPolicy } from '../config/mapping-schema.ts';
import { duplicateMessage, firstPassLosers, supersededMessage, type ReopenRows } from './duplicate-keys.ts';
import { Probation, localReject, stoppedEarly } from './row-fate.ts';
import { CanonicalCsvWriter } from './write/canonical-csv.ts';
import { processingDir } from './folders.ts';

export interface ImportSendContext {
  readonly db: StateDb;
  readonly client: ApiClient;
  readonly clock: Clock;
  readonly random?: () => number;
  readonly signal?: AbortSignal | undefined;
  /** Called on every poll (status output, logs). */
  readonly onPoll?: (job: Job) => void;
}

/** A job that ended in `failed`: the file fails with its detail. */
export class ImportJobFailedError extends Error {
  readonly code = 'IMPORT_JOB_FAILED';
  readonly job: Job;
  constructor(job: Job) {
    super(`import job ${job.job_id} failed: ${job.error ?? 'no detail given'}`);
    this.name = 'ImportJobFailedError';
    this.job = job;
  }
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
 * RowsRejectedError when the first rows are all rejected (row-fate.ts: nothing is uploaded).
 */
export async function sendImport(
  ctx: ImportSendContext,
  file: PushFile,
  rows: AsyncIterable<RowOutcome<EntityRecord>>,
  header: { customColumns: readonly string[]; duplicateKeys: DuplicateKeyPolicy },
  reopen: Reopen,
): Promise<void> {
  const entity = file.entity as Entity;
  const losers = await firstPassLosers(reopen, entity, header.duplicateKeys);
  const probation = new Probation();
  let superseded = 0;
  const canonicalPath = join(processingDir(file.inbox), `.${file.id}-canonical.csv`);
  const writer = await CanonicalCsvWriter.create(canonicalPath, { entity, customColumns: header.customColumns });
  const lines = new LineMap();
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
        const { line, rawFields: raw } = outcome;
        if (loser.rejected) {
          await record({ line, stage: 'local', field: null, code: 'duplicate_key', message: duplicateMessage(entity, loser.winner), raw });
          probation.rejected(line);
        } else {
          await record({ line, stage: 'superseded', field: null, code: 'superseded', message: supersededMessage(entity, loser.winner), raw });
          superseded += 1;
        }
        continue;
      }
      probation.valid(outcome.line); // answered by the job, after the upload: the count stops here
      const written = await writer.write(outcome.record);
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
    await setStatus(ctx.db, file.id, 'uploading');
    // Not given the drain signal: an upload in flight finishes, so its job id is recorded and never uploaded twice.
    jobId = (await UPLOAD[entity](ctx.client, canonical.path)).job_id;
    await recordJob(ctx.db, file.id, jobId);
  }
  const job = await pollJob(ctx, jobId);
  if (job.status === 'failed') throw new ImportJobFailedError(job);
  const refused = (job.errors ?? []).map((e) => ({ ...e, sourceLine: lines.sourceLine(e.line) ?? e.line }));
  const raw = await rawFieldsOf(reopen, new Set(refused.map((e) => e.sourceLine)));
  const apiRejects: RejectRow[] = refused.map((e) => ({
    line: e.sourceLine,
    stage: 'api',
    field: null,
    code: e.code,
    message: e.message,
    raw: raw.get(e.sourceLine) ?? [],
  }));
  const failed = job.rows_failed ?? apiRejects.length;
  const sent = lines.rows;
  await commitBatch(ctx.db, file.id, { ...empty, sent, accepted: job.rows_ok ?? sent - failed, failed }, apiRejects);
}

/** Polls until the job completes or fails: every 5-10 s while running, every 30-60 s while queued. */
export async function pollJob(ctx: ImportSendContext, jobId: string): Promise<Job> {
  const random = ctx.random ?? Math.random;
  for (;;) {
    const job = await ctx.client.jobs.get(jobId, { signal: ctx.signal });
    ctx.onPoll?.(job);
    if (job.status === 'completed' || job.status === 'failed') return job;
    const pace = job.status === 'queued' ? JOB_POLL_QUEUED_MS : JOB_POLL_RUNNING_MS;
    await ctx.clock.sleep(pace.min + Math.floor(random() * (pace.max - pace.min)), ctx.signal);
  }
}
