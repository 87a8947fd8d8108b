/**
 * What `push` prints at the end. Its exit code is the file's verdict (src/ingest/file/file-verdict.ts): 0 every row
 * accepted (or the same content was already sent: nothing to do); 3 the file was done but some rows were rejected
 * (locally or by the API; see the rejects CSV); 4 the file failed or was refused; 1 it was deferred (API unreachable
 * or failing after the retries, key rejected, interrupted: it stays in processing/ and the same command resumes it),
 * held by the brakes, or vanished. 2 (a config or usage mistake) is decided before any file is touched. `--dry-run`
 * uses the same codes for what a push would do. The table of every command's codes: exit-table.ts.
 */
import type { DryRunResult } from '../../ingest/operations/dry-run.ts';
import { dryRunVerdict } from '../../ingest/file/file-verdict.ts';
import { exitCodeOf, exitCodeOfResult } from './exit-table.ts';
import type { FileResult } from '../../ingest/file/push-file.ts';
import type { FileFormatError } from '../../ingest/read/errors.ts';
import { sentReasons, sentReasonsText } from '../../ingest/delta/delta-plan.ts';
import { rejectedRows, type FileCounts } from '../../ingest/file/row-fate.ts';
import type { DeltaFileRecord } from '../../store/delta-state.ts';
import type { PushFile } from '../../store/push-ledger.ts';
import { heldText } from './files-text.ts';
import { formatCount } from './progress.ts';

export interface ResultView {
  readonly result: FileResult;
  /** The ledger's counts of the file (null for results without a ledger row). */
  readonly counts: FileCounts | null;
  /** A duplicate: the file that sent the content. */
  readonly sentBy?: PushFile | null;
  /** Sent again because the source's mapping changed since this file sent the same content. */
  readonly remappedFrom?: PushFile | null;
  /** A delta source's file: what the comparison decided (why each row was sent). */
  readonly delta?: DeltaFileRecord | null;
}

function rowsOf(file: PushFile, counts: FileCounts | null) {
  return {
    read: file.rows_read,
    sent: file.rows_sent ?? counts?.sent ?? null,
    accepted: file.rows_accepted ?? counts?.accepted ?? null,
    rejected: file.rows_rejected ?? (counts ? rejectedRows(counts) : null),
    rejected_locally: counts?.rejectedLocally ?? null,
    rejected_by_api: counts?.rejectedByApi ?? null,
    superseded: file.rows_superseded ?? counts?.superseded ?? null,
    merged: file.rows_merged ?? counts?.merged ?? null,
    unchanged: file.rows_unchanged ?? counts?.unchanged ?? null,
    skipped: file.rows_skipped,
  };
}

/** The JSON form of one result (`--json`). */
export function resultJson({ result, counts, delta = null }: ResultView): Record<string, unknown> {
  const base = { outcome: result.outcome, exit_code: exitCodeOfResult(result) };
  switch (result.outcome) {
    case 'refused':
      return { ...base, file: result.path, error: { code: 'FILE_REFUSED', message: result.reason }, report: result.reportPath };
    case 'vanished':
      return { ...base, file: result.path, error: { code: 'FILE_VANISHED', message: 'the file disappeared before it was claimed' } };
    default: {
      const f = result.file;
      const rows = result.outcome === 'duplicate' ? null : rowsOf(f, counts);
      const common = { ...base, file: f.original_name, source: f.source, entity: f.entity, mode: f.mode, job_id: f.job_id, rows };
      if (result.outcome === 'deferred') {
        return { ...common, processing_path: f.processing_path, error: result.error, retry_at: result.retryAt };
      }
      if (result.outcome === 'held') return { ...common, held_path: result.heldPath, preview: result.previewPath, brakes: result.brakes };
      const error = f.error_code === null ? null : { code: f.error_code, message: f.error_message ?? '' };
      const sent = delta === null ? {} : { sent_because: sentReasons(delta) };
      return { ...common, ...sent, final_path: f.final_path, report: result.reportPath, rejects: result.rejectsPath, error, duplicate_of: f.duplicate_of };
    }
  }
}

function n(value: number | null | undefined): string {
  return value === null || value === undefined ? '-' : formatCount(value);
}

/** The human form of one result: a headline, then indented details. */
export function resultText({ result, counts, sentBy = null, remappedFrom = null, delta = null }: ResultView): string {
  if (result.outcome === 'refused') {
    return `${result.path}: refused (${result.reason}); moved to failed/\n  report:  ${result.reportPath}\n`;
  }
  if (result.outcome === 'vanished') {
    return `${result.path}: the file disappeared before it could be claimed (did the agent's daemon take it?)\n`;
  }
  const f = result.file;
  const what = `${f.source.startsWith('cli:') ? `entity ${f.entity}` : `source ${f.source}, ${f.entity}`}, ${f.mode}`;
  const lines: string[] = [];
  if (result.outcome === 'deferred') {
    lines.push(`${f.original_name}: not finished (${what}): ${result.error.code}: ${result.error.message}`);
    lines.push(`  The file stays in ${f.processing_path}; run the same push again to resume it where it stopped.`);
    if (counts !== null && counts.batches > 0) lines.push(`  So far: ${n(counts.sent)} rows sent, ${n(counts.accepted)} accepted.`);
    return `${lines.join('\n')}\n`;
  }
  if (result.outcome === 'held') return heldText(result);
  const rows = rowsOf(f, counts);
  if (result.outcome === 'duplicate') {
    const by = sentBy === null ? '' : ` by ${sentBy.source === f.source ? 'this source' : `source ${sentBy.source}`} as ${sentBy.original_name} (file #${sentBy.id})`;
    lines.push(`${f.original_name}: skipped (${what}): the same content was already sent${by}; --force sends it again`);
  } else if (result.outcome === 'failed') {
    lines.push(`${f.original_name}: failed (${what}): ${f.error_code ?? 'ERROR'}: ${f.error_message ?? ''}`);
  } else {
    // A superseded row is not sent: for transactions a sale that does not reach the platform (issue 28), so the
    // outcome line names them even when the exit code is 0; merged rows reached it added into another row, and the
    // line says so too (the platform holds fewer transactions than the file has lines).
    const superseded = rows.superseded ?? 0;
    const merged = rows.merged ?? 0;
    const dropped = superseded > 0 ? `, ${n(superseded)} row${superseded === 1 ? '' : 's'} superseded (same key as another row)` : '';
    const added = merged > 0 ? `, ${n(merged)} row${merged === 1 ? '' : 's'} merged (quantity added to another row with the same key)` : '';
    const verdict = `${(rows.rejected ?? 0) > 0 ? 'done, some rows rejected' : 'done'}${dropped}${added}`;
    const again = remappedFrom === null ? '' : `; sent again: mapping changed since the last push (file #${remappedFrom.id})`;
    lines.push(`${f.original_name}: ${verdict} (${what}${f.job_id ? `, job ${f.job_id}` : ''})${again}`);
  }
  if (result.outcome !== 'duplicate' && rows.read !== null) {
    const detail = rows.rejected ? ` (${n(rows.rejected_locally)} locally, ${n(rows.rejected_by_api)} by the API)` : '';
    const skipped = (rows.skipped ?? 0) > 0 ? `, ${n(rows.skipped)} skipped` : '';
    const unchanged = (rows.unchanged ?? 0) > 0 ? `, ${n(rows.unchanged)} unchanged` : '';
    lines.push(`  rows:    ${n(rows.read)} read, ${n(rows.sent)} sent, ${n(rows.accepted)} accepted, ${n(rows.rejected)} rejected${detail}, ${n(rows.superseded)} superseded, ${n(rows.merged)} merged${unchanged}${skipped}`);
    if (delta !== null) lines.push(`  sent because: ${sentReasonsText(sentReasons(delta), n)}`);
  }
  lines.push(`  file:    ${f.final_path ?? ''}`);
  lines.push(`  report:  ${result.reportPath}`);
  if (result.rejectsPath !== null) lines.push(`  rejects: ${result.rejectsPath}`);
  return `${lines.join('\n')}\n`;
}

export function dryRunExitCode(result: DryRunResult): number {
  return exitCodeOf(dryRunVerdict(result));
}

/** A dry run of a file a push would fail as a whole (the reader's FileFormatError): exit 4, as the push would. */
export function dryRunFailedText(file: string, label: string, error: FileFormatError): string {
  return `${file}: would fail (${label}): ${error.code}: ${error.message}\n  nothing was sent; a push would move the file to failed/\n`;
}

export function dryRunFailedJson(file: string, label: string, error: FileFormatError): Record<string, unknown> {
  return { dry_run: true, exit_code: exitCodeOf('failed'), file, target: label, error: error.toJSON() };
}

/** The delta part of a dry run, for --json. */
function dryRunDeltaJson(result: DryRunResult): Record<string, unknown> | null {
  const d = result.delta;
  if (d === null) return null;
  const c = d.comparison.counts;
  return {
    mode: d.mode,
    reason: d.reason,
    known_keys: c.known,
    unchanged: d.mode === 'full' ? 0 : c.unchanged,
    changed: c.changed,
    new: c.newKeys,
    changed_on_platform: c.platformChanged,
    refused_before: c.refusedBefore,
    remapped: c.remapped,
    missing: c.missing,
    brakes: d.tripped.map((t) => ({ brake: t.brake, limit: t.limit, value: Number.isFinite(t.value) ? t.value : null, message: t.message })),
  };
}

export function dryRunJson(file: string, label: string, mode: string, result: DryRunResult): Record<string, unknown> {
  const s = result.summary;
  return {
    delta: dryRunDeltaJson(result),
    outcome: 'dry_run',
    exit_code: dryRunExitCode(result),
    file,
    target: label,
    mode,
    rows: {
      read: s.rows,
      valid: s.accepted,
      rejected: result.rejected,
      duplicates: result.duplicates,
      superseded: result.superseded,
      merged: result.merged,
      skipped: s.skipped,
      would_send: result.wouldSend,
      blank_lines: s.blankLines,
    },
    failure: result.failure,
    delimiter: s.delimiter,
    encoding: s.encoding,
    warnings: s.warnings,
    rejects: result.rejectsPath,
  };
}

export function dryRunText(file: string, label: string, mode: string, result: DryRunResult): string {
  const s = result.summary;
  const lines = [`${file}: dry run (${label}, ${mode}): nothing was sent`];
  const superseded = result.superseded > 0 ? `, ${n(result.superseded)} superseded by another row with the same key` : '';
  const merged = result.merged > 0 ? `, ${n(result.merged)} merged into another row with the same key` : '';
  const duplicates = result.duplicates > 0 ? ` (${n(result.duplicates)} of them duplicate keys)` : '';
  const skipped = s.skipped > 0 ? `, ${n(s.skipped)} skipped` : '';
  lines.push(`  rows:    ${n(s.rows)} read, ${n(s.accepted - result.duplicates)} valid, ${n(result.rejected)} rejected${duplicates}${superseded}${merged}${skipped}`);
  const d = result.delta;
  if (d === null) lines.push(`  would send ${n(result.wouldSend)} rows`);
  else {
    const c = d.comparison.counts;
    const unchanged = d.mode === 'full' ? `; a full send (${d.reason ?? ''}): ${n(c.unchanged)} of them unchanged` : `; ${n(c.unchanged)} unchanged`;
    lines.push(`  would send ${n(result.wouldSend)} of ${n(s.rows)} rows${unchanged}`);
    lines.push(`  compared with ${n(c.known)} known keys: ${n(c.changed)} changed, ${n(c.newKeys)} new, ${n(c.platformChanged)} changed on the platform${c.refusedBefore > 0 ? `, ${n(c.refusedBefore)} refused by the API before` : ''}${c.remapped > 0 ? `, ${n(c.remapped)} under a changed mapping` : ''}${c.missing > 0 ? `, ${n(c.missing)} missing` : ''}`);
    for (const t of d.tripped) lines.push(`  WOULD BE HELD: ${t.message}`);
  }
  if (result.failure !== null) lines.push(`  the file would fail: ${result.failure.code}: ${result.failure.message}`);
  for (const warning of s.warnings) lines.push(`  warning: ${warning}`);
  lines.push(result.rejectsPath === null ? '  rejects: none' : `  rejects: ${result.rejectsPath}`);
  return `${lines.join('\n')}\n`;
}
