/** Asynchronous import jobs and transaction-export status objects. */
import { z } from 'zod';
import { nullish, readDateTime, readUuid } from './common.ts';

export const JOB_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
export const JobStatus = z.enum(JOB_STATUSES);
export type JobStatus = z.infer<typeof JobStatus>;

/** A row-level error of an import job in the sandbox's default dialect (not shown in the spec). */
export const JobRowError = z.looseObject({ line: z.number().int(), code: z.string(), message: z.string() });
export type JobRowError = z.infer<typeof JobRowError>;

/** Where a job is in its life, whatever the server calls its status (the document names four; a server may not). */
export type JobPhase = JobStatus | 'unknown';

const STATUS_PHASES: Readonly<Record<string, JobStatus>> = {
  queued: 'queued',
  pending: 'queued',
  waiting: 'queued',
  accepted: 'queued',
  created: 'queued',
  scheduled: 'queued',
  running: 'running',
  processing: 'running',
  in_progress: 'running',
  started: 'running',
  importing: 'running',
  completed: 'completed',
  complete: 'completed',
  done: 'completed',
  succeeded: 'completed',
  success: 'completed',
  finished: 'completed',
  failed: 'failed',
  failure: 'failed',
  error: 'failed',
  errored: 'failed',
  cancelled: 'failed',
  canceled: 'failed',
  aborted: 'failed',
};

/** The phase of a status name (case and separators ignored); `unknown` for a name the agent does not know. */
export function jobPhaseOf(status: string): JobPhase {
  return STATUS_PHASES[status.trim().toLowerCase().replace(/[\s-]+/g, '_')] ?? 'unknown';
}

/** One refused row a job record names: its line in the file sent (header = line 1) when the record says it. */
export interface JobFailedRow {
  line: number | null;
  code: string | null;
  message: string;
}

/**
 * What a job record says about refused rows (not shown in the document), in whatever shape: `list` names every
 * refused row, `sample` names some of more (a count says how many), `counts` only counts them, `message` gives only a
 * text, `none` says nothing.
 */
export type JobFailureDetail =
  | { kind: 'list' | 'sample'; rows: JobFailedRow[]; failed: number | null; message: string | null }
  | { kind: 'counts'; failed: number; message: string | null }
  | { kind: 'message'; message: string }
  | { kind: 'none' };

const LIST_KEYS = ['errors', 'failed_rows', 'failures', 'row_errors', 'rejected_rows', 'invalid_rows', 'sample', 'sample_errors', 'error_sample'];
const COUNT_KEYS = ['rows_failed', 'failed_count', 'failed_rows', 'error_count', 'errors_count', 'failures_count', 'failed'];
const MESSAGE_KEYS = ['error', 'message', 'detail', 'reason'];

/**
 * The line in the file sent (physical CSV line, the header being line 1) of a refused row entry: `line` or
 * `line_number` as they are; `row` or `row_number` counted among the data rows (1-based: + 1 for the header);
 * `index` 0-based among the data rows (+ 2).
 */
function lineOf(entry: Record<string, unknown>): number | null {
  const int = (value: unknown) => (typeof value === 'number' && Number.isInteger(value) ? value : typeof value === 'string' && /^\d{1,12}$/.test(value) ? Number(value) : null);
  for (const [key, offset] of [['line', 0], ['line_number', 0], ['row', 1], ['row_number', 1], ['record', 1], ['index', 2]] as const) {
    const value = int(entry[key]);
    if (value !== null) return value + offset;
  }
  return null;
}

function textOf(entry: Record<string, unknown>, keys: readonly string[]): string | null {
  for (const key of keys) {
    const value = entry[key];
    if (typeof value === 'string' && value !== '') return value;
  }
  return null;
}

export function jobFailureDetail(job: Record<string, unknown>): JobFailureDetail {
  let rows: JobFailedRow[] | null = null;
  for (const key of LIST_KEYS) {
    const list = job[key];
    if (!Array.isArray(list) || list.length === 0) continue;
    rows = list.map((entry: unknown) => {
      if (typeof entry !== 'object' || entry === null) return { line: null, code: null, message: String(entry) };
      const e = entry as Record<string, unknown>;
      return { line: lineOf(e), code: textOf(e, ['code', 'type']), message: textOf(e, ['message', 'error', 'reason', 'msg', 'detail']) ?? JSON.stringify(e) };
    });
    break;
  }
  let failed: number | null = null;
  for (const key of COUNT_KEYS) {
    const value = job[key];
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0) {
      failed = value;
      break;
    }
  }
  const message = textOf(job, MESSAGE_KEYS);
  if (rows !== null) return { kind: failed !== null && failed > rows.length ? 'sample' : 'list', rows, failed, message };
  if (failed !== null) return { kind: 'counts', failed, message };
  return message !== null ? { kind: 'message', message } : { kind: 'none' };
}

/**
 * A job record as read. The document shows job_id, job_type, status (queued, running, completed, failed), progress,
 * created_at and started_at; a server may name statuses otherwise, send progress null, and put failure detail under
 * names of its own. Required: job_id and status. `phase` is the status the agent acts on; `detail` what the record
 * says about refused rows (jobFailureDetail). The sandbox's own fields (rows_ok, errors...) are kept as read.
 */
export const Job = z
  .looseObject({
    job_id: z.string(),
    job_type: nullish(z.string()),
    status: z.string(),
    progress: nullish(z.number()),
    created_at: nullish(readDateTime),
    started_at: nullish(readDateTime),
    finished_at: nullish(readDateTime),
    rows_total: nullish(z.number().int()),
    rows_ok: nullish(z.number().int()),
    rows_failed: nullish(z.number().int()),
    error: nullish(z.string()).catch(null),
    errors: z.array(JobRowError).optional().catch(undefined),
  })
  .transform((job) => ({ ...job, phase: jobPhaseOf(job.status), detail: jobFailureDetail(job) }));
export type Job = z.infer<typeof Job>;

export const EXPORT_STATUSES = [
  'queued',
  'running',
  'completed',
  'failed',
  'cancelling',
  'cancelled',
  'expired',
] as const;

/**
 * Export status: "additional properties are not allowed", so no field beyond these is accepted. Its values are read
 * as every other response's (docs/api-assumptions.md): any UUID-shaped id, any ISO 8601 form of a date-time.
 */
export const ExportStatus = z.strictObject({
  export_id: readUuid,
  job_id: readUuid,
  status: z.enum(EXPORT_STATUSES),
  rows_written: z.number().int(),
  total_rows: z.number().int().nullable(),
  expires_at: readDateTime,
  error: z.string().nullable().optional(),
});
export type ExportStatus = z.infer<typeof ExportStatus>;
