/**
 * `files list|show|retry` for people. Same facts as `--json`, aligned and short.
 */
import type { FileResult } from '../../ingest/file/push-file.ts';
import type { FileDetail, FileListItem } from '../../status/file-list.ts';
import { releaseCommand, sentReasons, sentReasonsText } from '../../ingest/delta/delta-plan.ts';
import { problemColumns } from '../../ingest/file/rejects-csv.ts';
import { fixesNote, labelled, plural, shortTime, table } from './status-table.ts';

function rows(f: { rows_read: number | null; rows_accepted: number | null; rows_rejected: number | null }): string {
  if (f.rows_read === null && f.rows_accepted === null) return '-';
  return `${f.rows_read ?? '-'}/${f.rows_accepted ?? '-'}/${f.rows_rejected ?? '-'}`;
}

export function listText(items: readonly FileListItem[], now: Date): string {
  if (items.length === 0) return 'No files in the ledger match.\n';
  const lines = table(
    ['#ID', 'SOURCE', 'STATUS', '#ROWS READ/OK/REJECTED', 'WHEN', 'FILE'],
    items.map((f) => [
      String(f.id),
      f.source,
      f.next_attempt_at !== null ? `${f.status} (deferred: ${f.error_code ?? '?'})` : f.status === 'failed' ? `failed (${f.error_code ?? '?'})` : f.status,
      rows(f),
      shortTime(f.finished_at ?? f.claimed_at, now),
      `${f.name}${fixesNote(f.fixes_file_id)}${f.fixed_by === null ? '' : ` (fixed by #${f.fixed_by})`}`,
    ]),
  );
  return `${lines.join('\n')}\n`;
}

export function showText(d: FileDetail, now: Date): string {
  const f = d.file;
  const c = d.counts;
  const pairs: [string, string][] = [
    ['File', `#${f.id} ${f.original_name}`],
    ['Source', `${f.source} (${f.entity}, ${f.mode}${f.job_id ? `, import job ${f.job_id}` : ''})`],
    ['Status', d.status + (f.forced === 1 ? ' (forced)' : '')],
    ['Claimed', shortTime(f.claimed_at, now)],
    ['Finished', shortTime(f.finished_at, now)],
    ['Now at', d.location ?? `not at ${f.final_path ?? f.processing_path} any more (retried or moved)`],
    ['Size', `${f.size} bytes, sha256 ${f.sha256 || '-'}`],
    ['Rows', `${f.rows_read ?? '-'} read, ${c.sent} sent, ${c.accepted} accepted, ${c.rejectedLocally} rejected locally, ${c.rejectedByApi} refused by the API, ${c.superseded} superseded, ${c.merged} merged, ${c.unchanged} unchanged, ${f.rows_skipped ?? 0} skipped (${plural(c.batches, 'batch', 'batches')})`],
  ];
  if (d.delta !== null) pairs.push(['Sent because', sentReasonsText(sentReasons(d.delta))]);
  if (f.error_code !== null) pairs.push(['Error', `${f.error_code}: ${f.error_message ?? ''}`]);
  if (f.next_attempt_at !== null) pairs.push(['Next try', `${shortTime(f.next_attempt_at, now)} (attempt ${f.attempts + 1}; \`files retry ${f.id}\` tries now)`]);
  if (d.duplicate_of) pairs.push(['Same as', `#${d.duplicate_of.id} ${d.duplicate_of.name}, done ${shortTime(d.duplicate_of.finished_at, now)}`]);
  if (d.fixes) pairs.push(['Fixes', `the rejects of #${d.fixes.id} ${d.fixes.name} (${d.fixes.path ?? 'not archived'})`]);
  pairs.push(['Report', d.report_path ?? '-']);
  pairs.push(['Rejects', d.rejects_path ?? '-']);
  const lines = labelled(pairs);
  if (d.first_rejects.length > 0) {
    lines.push('', `First rejects (${d.first_rejects.length} of ${d.rejects_total}):`);
    lines.push(
      ...table(
        ['#LINE', 'STAGE', 'FIELD', 'CODE', 'MESSAGE'],
        d.first_rejects.map((r) => {
          const [field, code, message] = problemColumns(r.errors);
          return [String(r.line), r.stage, field === '' ? '-' : field, code, message];
        }),
        '  ',
      ),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** A file the brakes held: why, where it and its preview are, how to send it anyway. */
export function heldText(result: Extract<FileResult, { outcome: 'held' }>): string {
  const f = result.file;
  const lines = [`#${f.id} ${f.original_name}: held by the brakes; nothing was sent`];
  for (const brake of result.brakes) lines.push(`  brake:   ${brake}`);
  lines.push(`  file:    ${result.heldPath}`, `  preview: ${result.previewPath}`);
  lines.push(`  release: ${releaseCommand(f.id)}`);
  return `${lines.join('\n')}\n`;
}

export function resumedText(result: FileResult): string {
  switch (result.outcome) {
    case 'deferred':
      return `#${result.file.id} ${result.file.original_name}: not finished: ${result.error.code}: ${result.error.message}\n  It stays in processing/; next try ${result.retryAt}.\n`;
    case 'refused':
      return `${result.path}: refused (${result.reason}); moved to failed/\n`;
    case 'vanished':
      return `${result.path}: the file disappeared\n`;
    case 'held':
      return heldText(result);
    default: {
      const f = result.file;
      const head = `#${f.id} ${f.original_name}: ${result.outcome}${f.error_code !== null ? ` (${f.error_code}: ${f.error_message ?? ''})` : ''}`;
      const lines = [head, `  rows:    ${f.rows_read ?? '-'} read, ${f.rows_accepted ?? '-'} accepted, ${f.rows_rejected ?? '-'} rejected`];
      lines.push(`  file:    ${f.final_path ?? ''}`, `  report:  ${result.reportPath}`);
      if (result.rejectsPath !== null) lines.push(`  rejects: ${result.rejectsPath}`);
      return `${lines.join('\n')}\n`;
    }
  }
}
