/**
 * What a person reads about a file: `<name>.report.json` (counts, timings, job id, first errors) and
 * `<name>.rejects.csv` (every row that was not written; layout: rejects-csv.ts). Written next to the file's final
 * place, through temporary names, before the file is moved there. Superseded rows are not rejects (a later row with
 * the same key was written); the report lists them.
 */
import { AGENT_VERSION } from '../../version.ts';
import type { StateDb } from '../../store/state-db.ts';
import { maxRawFields, rejectsOf, type PushFile, type RowProblem, type StoredReject } from '../../store/push-ledger.ts';
import { rejectedRows, type FileCounts } from './row-fate.ts';
import type { DeltaFileRecord } from '../../store/delta-state.ts';
import { sentReasons, type SentReasons } from '../delta/delta-plan.ts';
import { redactSecrets } from '../../log.ts';
import { writeFileAtomic } from '../../atomic-file.ts';
import { REJECTS_SUFFIX, writeRejectsCsv } from './rejects-csv.ts';

/** How many rejects and superseded rows the report names (the CSV has all of them). */
export const REPORT_FIRST_ERRORS = 20;

/**
 * `rows` of `<name>.report.json` (row-fate.ts): read = sent + unchanged + rejected_locally + superseded + merged + skipped,
 * sent = accepted + rejected_by_api; accepted is what the platform holds from the file.
 */
export interface PushReportRows {
  /** Null when the file failed before it was read to the end. */
  read: number | null;
  sent: number;
  accepted: number;
  rejected: number;
  rejected_locally: number;
  rejected_by_api: number;
  superseded: number;
  /** Added up into another row of the file with the same key (duplicate_keys: sum), which was sent with the sums. */
  merged: number;
  /** Not sent because the platform already holds them (delta push); 0 until then. */
  unchanged: number;
  /** Skipped by `skip_rows`; null when the file was not read to the end. */
  skipped: number | null;
  blank_lines: number | null;
}

/** Delta push's account of a file (absent for sources without delta). */
export interface PushReportDelta extends SentReasons {
  /** `full`: every row was sent (push --full, delta.full_every, the source's first file). */
  mode: 'delta' | 'full';
  reason: string | null;
  /** Keys the agent remembered for the source before this file. */
  known_keys: number;
  /** Remembered keys this snapshot lacks (listed in missing_file). */
  missing: number;
  missing_file: string | null;
  /** Missing keys deleted through the API (missing: delete). */
  deleted: number;
}

/** `<name>.report.json`, as the README describes it. */
export interface PushReport {
  file: string;
  source: string;
  entity: string;
  mode: string;
  status: ReportInput['status'];
  sha256: string;
  size_bytes: number;
  job_id: string | null;
  /** A workbook's sheet that was read: every `line` of this report and of its rejects is a row number there. */
  sheet?: string;
  rows: PushReportRows | null;
  timings: { claimed_at: string; started_at: string | null; finished_at: string; duration_ms: number };
  /** The first rejected rows, each with its first problem and, for a local reject, all of them. */
  first_errors: { line: number; stage: string; field: string | null; code: string; message: string; problems?: RowProblem[] }[];
  superseded: { line: number; message: string }[];
  /** The first merged rows, each with the line it was added into. */
  merged: { line: number; message: string }[];
  warnings: readonly string[];
  error: { code: string; message: string } | null;
  duplicate_of: { id: number; file: string; source: string; sha256: string; finished_at: string | null; archived_at: string | null } | null;
  /** A corrected rejects CSV dropped back: the file whose rejects it fixes, and that file's report. */
  fixes?: { id: number; file: string; archived_at: string | null; report: string | null };
  rejects_file: string | null;
  delta: PushReportDelta | null;
  agent_version: string;
}

export interface ReportInput {
  file: PushFile;
  status: 'done' | 'failed' | 'duplicate';
  finalPath: string;
  finishedAt: string;
  counts: FileCounts | null;
  rowsRead: number | null;
  skipped: number | null;
  blankLines: number | null;
  headers: readonly string[] | null;
  delimiter: string | null;
  sheet: string | null;
  warnings: readonly string[];
  error: { code: string; message: string } | null;
  duplicateOf: PushFile | null;
  /** What delta push decided for the file (null without delta). */
  delta: DeltaFileRecord | null;
  /** Where the missing keys of a snapshot are written (null: none). */
  missingPath: string | null;
  /** A corrected rejects CSV: the file whose rejects it fixes (rejects-fix.ts). */
  fixes: PushFile | null;
}

export interface WrittenReport {
  reportPath: string;
  rejectsPath: string | null;
  /** What the report says: the file's log line says the same (push-file.ts logOutcome). */
  report: PushReport;
}

export async function writeReport(db: StateDb, input: ReportInput): Promise<WrittenReport> {
  const { file, counts } = input;
  const rejected = counts ? rejectedRows(counts) : 0;
  const rejectsPath = rejected > 0 ? `${input.finalPath}${REJECTS_SUFFIX}` : null;
  // The report's first errors are the rejects CSV's first rows: kept as the CSV is written, not read again.
  const rejects = rejectsOf(db, file.id, ['local', 'api']);
  const first: StoredReject[] = [];
  if (rejectsPath !== null) {
    const layout = { headers: input.headers ?? [], delimiter: input.delimiter ?? ',', widest: await maxRawFields(db, file.id) };
    await writeRejectsCsv(rejectsPath, layout, keepingFirst(rejects, first, REPORT_FIRST_ERRORS));
  } else {
    first.push(...(await take(rejects, REPORT_FIRST_ERRORS)));
  }
  const firstErrors = first.map(({ line, stage, field, code, message, errors }) => ({
    line,
    stage,
    field,
    code,
    message,
    ...(errors.length > 1 ? { problems: errors } : {}),
  }));
  const superseded = (await take(rejectsOf(db, file.id, ['superseded']), REPORT_FIRST_ERRORS)).map(({ line, message }) => ({ line, message }));
  const merged = (await take(rejectsOf(db, file.id, ['merged']), REPORT_FIRST_ERRORS)).map(({ line, message }) => ({ line, message }));
  const started = file.started_at ?? file.claimed_at;
  const report: PushReport = {
    file: file.original_name,
    source: file.source,
    entity: file.entity,
    mode: file.mode,
    status: input.status,
    sha256: file.sha256,
    size_bytes: file.size,
    job_id: file.job_id,
    ...(input.sheet === null ? {} : { sheet: input.sheet }),
    rows: counts
      ? {
          read: input.rowsRead,
          sent: counts.sent,
          accepted: counts.accepted,
          rejected: rejected,
          rejected_locally: counts.rejectedLocally,
          rejected_by_api: counts.rejectedByApi,
          superseded: counts.superseded,
          merged: counts.merged,
          unchanged: counts.unchanged,
          skipped: input.skipped,
          blank_lines: input.blankLines,
        }
      : null,
    timings: {
      claimed_at: file.claimed_at,
      started_at: file.started_at,
      finished_at: input.finishedAt,
      duration_ms: Date.parse(input.finishedAt) - Date.parse(started),
    },
    first_errors: firstErrors,
    superseded: superseded,
    merged,
    warnings: input.warnings,
    error: input.error ? { code: input.error.code, message: redactSecrets(input.error.message) } : null,
    duplicate_of: input.duplicateOf
      ? { id: input.duplicateOf.id, file: input.duplicateOf.original_name, source: input.duplicateOf.source, sha256: input.duplicateOf.sha256, finished_at: input.duplicateOf.finished_at, archived_at: input.duplicateOf.final_path }
      : null,
    ...(input.fixes === null
      ? {}
      : {
          fixes: {
            id: input.fixes.id,
            file: input.fixes.original_name,
            archived_at: input.fixes.final_path,
            report: input.fixes.final_path === null ? null : `${input.fixes.final_path}.report.json`,
          },
        }),
    rejects_file: rejectsPath,
    delta: input.delta ? deltaSection(input.delta, input.missingPath) : null,
    agent_version: AGENT_VERSION,
  };
  const reportPath = `${input.finalPath}.report.json`;
  await writeFileAtomic(reportPath, [`${JSON.stringify(report, null, 2)}\n`]);
  return { reportPath, rejectsPath, report };
}

function deltaSection(d: DeltaFileRecord, missingPath: string | null): PushReportDelta {
  return {
    mode: d.mode,
    reason: d.reason,
    known_keys: d.known,
    ...sentReasons(d),
    missing: d.missing,
    missing_file: missingPath,
    deleted: d.deleted,
  };
}

/** Passes `items` through, keeping the first `n` of them in `kept`. */
async function* keepingFirst<T>(items: AsyncIterable<T>, kept: T[], n: number): AsyncGenerator<T> {
  for await (const item of items) {
    if (kept.length < n) kept.push(item);
    yield item;
  }
}

async function take<T>(items: AsyncIterable<T>, n: number): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) {
    if (out.length >= n) break;
    out.push(item);
  }
  return out;
}
