/**
 * Import jobs and their pace. A job goes queued -> running -> completed | failed; `GET /v1/jobs/{job_id}` shows it.
 * Fields beyond the spec's (our choice, docs/sandbox.md): finished_at, rows_total, rows_ok, rows_failed, error
 * (why a job failed) and errors (the first 100 row errors, each {line, code, message}).
 *
 * The pace is injectable: 'instant' runs a job as fast as the event loop allows (fast tests); a paced job waits
 * `queuedMs` in queued and then `tickMs` after every `rowsPerTick` rows, through the injected clock, so a test with a
 * manual clock walks a job through its states without sleeping.
 */
import type { Entity, JobRowError, JobStatus } from '../api/schemas/index.ts';
import type { Dialect } from './dialect.ts';
import { isoTime } from './http-io.ts';
import type { Prng } from './prng.ts';

export type JobPace = 'instant' | { readonly queuedMs: number; readonly tickMs: number; readonly rowsPerTick: number };

/** The CLI's default: visible progress without making a demo wait long. */
export const DEFAULT_CLI_PACE: JobPace = { queuedMs: 1000, tickMs: 1000, rowsPerTick: 10_000 };

/** job_type values (the spec only says "for example an import of products"). */
export const JOB_TYPES: Readonly<Record<Entity, string>> = {
  products: 'import_products',
  product_store: 'import_product_store',
  transactions: 'import_transactions',
  competitor_prices: 'import_competitor_prices',
};

/** Row errors kept per job; rows_failed still counts all of them. */
export const JOB_ERRORS_KEPT = 100;

export interface JobRecord {
  job_id: string;
  job_type: string;
  status: JobStatus;
  progress: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  rows_total: number | null;
  rows_ok: number;
  rows_failed: number;
  error: string | null;
  errors: JobRowError[];
  /** Data row (1-based, the header not counted) of each of `errors`: the `row` of a dialect's `failed_rows`. */
  errorRows: number[];
}

export class JobBook {
  readonly #jobs = new Map<string, JobRecord>();
  readonly #ids: Prng;

  constructor(ids: Prng) {
    this.#ids = ids;
  }

  create(entity: Entity, now: number): JobRecord {
    const job: JobRecord = {
      job_id: this.#ids.uuid(),
      job_type: JOB_TYPES[entity],
      status: 'queued',
      progress: 0,
      created_at: isoTime(now),
      started_at: null,
      finished_at: null,
      rows_total: null,
      rows_ok: 0,
      rows_failed: 0,
      error: null,
      errors: [],
      errorRows: [],
    };
    this.#jobs.set(job.job_id, job);
    return job;
  }

  get(id: string): JobRecord | undefined {
    return this.#jobs.get(id);
  }

  all(): IterableIterator<JobRecord> {
    return this.#jobs.values();
  }

  countByStatus(): Record<JobStatus, number> {
    const counts: Record<JobStatus, number> = { queued: 0, running: 0, completed: 0, failed: 0 };
    for (const job of this.#jobs.values()) counts[job.status] += 1;
    return counts;
  }
}

export function startJob(job: JobRecord, now: number): void {
  job.status = 'running';
  job.started_at = isoTime(now);
}

export function finishJob(job: JobRecord, now: number, error: string | null): void {
  job.status = error === null ? 'completed' : 'failed';
  job.error = error;
  job.finished_at = isoTime(now);
  if (error === null) job.progress = 100;
}

export function recordRowError(job: JobRecord, line: number, row: number, code: string, message: string): void {
  job.rows_failed += 1;
  if (job.errors.length < JOB_ERRORS_KEPT) {
    job.errors.push({ line, code, message });
    job.errorRows.push(row);
  }
}

/** Status names of the `other` dialect choice. */
const OTHER_STATUS: Readonly<Record<JobStatus, string>> = { queued: 'pending', running: 'processing', completed: 'done', failed: 'error' };
/** Examples of refused rows in a `sample` job record. */
const SAMPLE_SIZE = 3;

/**
 * GET /v1/jobs/{job_id} as the dialect answers it: the document's fields always (job_id, job_type, status,
 * progress, created_at, started_at); beyond them, what `jobRowErrors` says the server tells about refused rows.
 */
export function jobJson(job: JobRecord, dialect: Dialect): Record<string, unknown> {
  const documented = {
    job_id: job.job_id,
    job_type: job.job_type,
    status: dialect.jobStatuses === 'other' ? OTHER_STATUS[job.status] : job.status,
    progress: job.status === 'queued' && dialect.queuedProgress === null ? null : job.progress,
    created_at: job.created_at,
    started_at: job.started_at,
  };
  switch (dialect.jobRowErrors) {
    case 'completed': {
      const { errorRows: _rows, ...wire } = job;
      return { ...wire, ...documented };
    }
    case 'none':
      return documented;
    case 'rows':
      return {
        ...documented,
        error: job.error,
        failed_rows: job.errors.map((e, i) => ({ row: job.errorRows[i], error: `${e.code}: ${e.message}` })),
      };
    case 'sample':
      return {
        ...documented,
        finished_at: job.finished_at,
        error: job.error,
        failed_count: job.rows_failed,
        sample: job.errors.slice(0, SAMPLE_SIZE).map((e) => ({ line: e.line, message: e.message })),
      };
  }
}
