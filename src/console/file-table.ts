/**
 * The table of files, on the overview (the last few) and on the files page (filtered): what happened to each file,
 * with its counts and links to download its report and rejects.
 *
 * `unchanged` (rows a delta push skipped, issue 13) gets its column as soon as the ledger reports it.
 */
import type { ConsoleFile } from './console-data.ts';
import { count, localTime, type TimeFormat } from './format.ts';
import { html, type Html } from './html.ts';
import { dataTable, statusPill, type Column } from './layout.ts';

export function fileHref(id: number): string {
  return `/files/${id}`;
}

export function reportHref(id: number): string {
  return `/files/${id}/report.json`;
}

export function rejectsHref(id: number): string {
  return `/files/${id}/rejects.csv`;
}

/** Rows a delta push left out as unchanged, once the ledger has them. */
function unchangedOf(file: object): number | null | undefined {
  const value = (file as { rows_unchanged?: unknown }).rows_unchanged;
  return typeof value === 'number' || value === null ? value : undefined;
}

/** Links that download the file's report and rejects, where they exist. */
export function downloadLinks(
  file: { id: number; report_path: string | null; rejects_path: string | null },
  style: { className?: string; separator?: string; report?: string; rejects?: string } = {},
): Html {
  const links: Html[] = [];
  const extra = style.className === undefined ? '' : ` ${style.className}`;
  if (file.report_path !== null) links.push(html`<a href="${reportHref(file.id)}" download class="report-link${extra}">${style.report ?? 'report'}</a>`);
  if (file.rejects_path !== null) links.push(html`<a href="${rejectsHref(file.id)}" download class="rejects-link${extra}">${style.rejects ?? 'rejects'}</a>`);
  return html`${links.flatMap((link, i) => (i === 0 ? [link] : [html`${style.separator ?? ' · '}`, link]))}`;
}

/**
 * Under a file's status in every list: why a failed file failed (its code and one sentence), and for a file the
 * brakes held, why and the command that sends it after all.
 */
export function failureReason(file: Pick<ConsoleFile, 'status' | 'error_code' | 'error_message' | 'release_command'>): Html | '' {
  if (file.status === 'held') {
    return html`<span class="why held">${file.error_message ?? ''}${file.release_command !== null && html` <code class="release">${file.release_command}</code>`}</span>`;
  }
  if (file.status !== 'failed' || file.error_code === null) return '';
  return html`<span class="why"><code>${file.error_code}</code> ${file.error_message ?? ''}</span>`;
}

/** "fixed by #14", linked, under a failed file fixed since (dropped again corrected, or its rejects fixed). */
export function fixedByLink(fixedBy: number | null): Html | '' {
  return fixedBy === null ? '' : html`<a class="fixed-by" href="${fileHref(fixedBy)}">fixed by #${fixedBy}</a>`;
}

/** "fixes #12", linked, for a corrected rejects CSV (README, "Fix and drop again"); nothing for any other file. */
export function fixesLink(fixesFileId: number | null): Html | '' {
  return fixesFileId === null ? '' : html`<a class="fixes" href="${fileHref(fixesFileId)}">fixes #${fixesFileId}</a>`;
}

export function filesTable(files: readonly ConsoleFile[], time: TimeFormat, empty: string): Html {
  const withUnchanged = files.some((f) => unchangedOf(f) !== undefined);
  // Only where a file has merged rows (duplicate_keys: sum): most lists have none, and the table is wide already.
  const withMerged = files.some((f) => (f.rows_merged ?? 0) > 0);
  const columns: Column[] = [
    { label: '#', num: true, wide: true },
    { label: 'File', head: true },
    { label: 'Status' },
    { label: 'Read', num: true },
    { label: 'Accepted', num: true },
    { label: 'Rejected', num: true },
    { label: 'Superseded', num: true, wide: true },
    ...(withMerged ? [{ label: 'Merged', num: true, wide: true }] : []),
    ...(withUnchanged ? [{ label: 'Unchanged', num: true }] : []),
    { label: 'Finished' },
    { label: 'Downloads' },
  ];
  const rows = files.map((f) => ({
    attrs: html` data-file-id="${f.id}"`,
    cells: [
      html`<a href="${fileHref(f.id)}">${f.id}</a>`,
      html`<a href="${fileHref(f.id)}" class="file-name" title="${f.name}">${f.name}</a>${fixesLink(f.fixes_file_id)}<a class="entity" href="/files?source=${encodeURIComponent(f.source)}">${f.source}</a>`,
      html`${statusPill(f.status)}${failureReason(f)}${fixedByLink(f.fixed_by)}`,
      count(f.rows_read),
      count(f.rows_accepted),
      count(f.rows_rejected),
      count(f.rows_superseded),
      ...(withMerged ? [count(f.rows_merged)] : []),
      ...(withUnchanged ? [count(unchangedOf(f))] : []),
      f.finished_at === null ? html`<span class="muted">claimed ${localTime(f.claimed_at, time)}</span>` : localTime(f.finished_at, time),
      downloadLinks(f),
    ],
  }));
  return dataTable(columns, rows, empty);
}
