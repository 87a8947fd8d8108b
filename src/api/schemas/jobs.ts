/** Asynchronous import jobs and transaction-export status objects. */
import { z } from 'zod';
import { isoDateTime, uuid } from './common.ts';

export const JOB_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
export const JobStatus = z.enum(JOB_STATUSES);
export type JobStatus = z.infer<typeof JobStatus>;

/** A row-level error of an import job (not shown in the spec; our choice, see docs/sandbox.md). */
export const JobRowError = z.looseObject({ line: z.number().int(), code: z.string(), message: z.string() });
export type JobRowError = z.infer<typeof JobRowError>;

/**
 * A job record. The spec shows job_id, job_type, status, progress, created_at and started_at; the rest (completion
 * time, row counts, failure detail) is tolerated and optional.
 */
export const Job = z.looseObject({
  job_id: uuid,
  job_type: z.string(),
  status: JobStatus,
  progress: z.number().int(),
  created_at: isoDateTime,
  started_at: isoDateTime.nullable().optional(),
  finished_at: isoDateTime.nullable().optional(),
  rows_total: z.number().int().nullable().optional(),
  rows_ok: z.number().int().nullable().optional(),
  rows_failed: z.number().int().nullable().optional(),
  error: z.string().nullable().optional(),
  errors: z.array(JobRowError).optional(),
});
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

/** Export status: "additional properties are not allowed", so this one is strict on both sides. */
export const ExportStatus = z.strictObject({
  export_id: uuid,
  job_id: uuid,
  status: z.enum(EXPORT_STATUSES),
  rows_written: z.number().int(),
  total_rows: z.number().int().nullable(),
  expires_at: isoDateTime,
  error: z.string().nullable().optional(),
});
export type ExportStatus = z.infer<typeof ExportStatus>;
