/**
 * `/files/ID`: one file, as `pricing-agent files show ID` reads it: its counts, where it is, its report and rejects
 * to download, its history in the ledger (claimed, started, the batches with their results, the import job, the
 * outcome or the deferral), the first rejects as a table with the row's own fields, and the report itself.
 */
import { basename } from 'node:path';
import { problemColumns } from '../ingest/file/rejects-csv.ts';
import type { StoredBatch } from '../store/push-ledger.ts';
import type { HeldDetail } from '../status/held-files.ts';
import type { ConsoleFileDetail } from './console-data.ts';
import { downloadLinks, fileHref } from './file-table.ts';
import { count, localTime, type TimeFormat } from './format.ts';
import { html, type Html } from './html.ts';
import { dataTable, figures, section, statusPill, type Column } from './layout.ts';

function plural(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

function history(d: ConsoleFileDetail, time: TimeFormat): Html {
  const f = d.file;
  const steps: Array<readonly [string | null, Html]> = [
    [f.claimed_at, html`Claimed from <code>${f.inbox}</code> (${plural(f.size, 'byte')}, sha256 <code title="${f.sha256}">${f.sha256.slice(0, 12)}…</code>)${f.forced === 1 && ', forced'}`],
  ];
  if (d.fixes !== null) {
    steps.push([null, html`A corrected rejects CSV: it fixes the rejects of <a class="fixes-of" href="${fileHref(d.fixes.id)}">#${d.fixes.id} ${d.fixes.name}</a>`]);
  }
  if (f.started_at !== null) {
    steps.push([f.started_at, html`Sending started: ${f.mode === 'bulk' ? `bulk, batches of ${count(f.batch_size)} rows` : 'as an import job'}`]);
  }
  if (f.job_id !== null) steps.push([null, html`Import job <code>${f.job_id}</code>`]);
  if (d.counts.batches > 0) {
    steps.push([
      d.batches.at(-1)?.committed_at ?? null,
      html`${plural(d.counts.batches, 'batch', 'batches')} committed: ${count(d.counts.sent)} rows sent, ${count(d.counts.accepted)} accepted, ${count(d.counts.rejectedByApi)} refused by the API`,
    ]);
  }
  if (f.next_attempt_at !== null) {
    steps.push([
      null,
      html`<span class="busy">Deferred after ${plural(f.attempts, 'attempt')}</span>${f.error_code !== null && html`: <code>${f.error_code}</code> ${f.error_message ?? ''}`}; next try ${localTime(f.next_attempt_at, time)}`,
    ]);
  }
  if (f.finished_at !== null) {
    const error = f.error_code === null ? '' : html`: <code>${f.error_code}</code> ${f.error_message ?? ''}`;
    const duplicate = d.duplicate_of === null ? '' : html` of <a href="${fileHref(d.duplicate_of.id)}">#${d.duplicate_of.id} ${d.duplicate_of.name}</a>`;
    steps.push([f.finished_at, html`Finished ${statusPill(d.status)}${duplicate}${error}; moved to <code>${f.final_path ?? '–'}</code>`]);
  }
  const where = d.location === null ? html`<span class="muted">not there any more (moved or retried)</span>` : html`<code>${d.location}</code>`;
  return html`<ol class="history">${steps.map(
    ([at, what]) => html`<li><span class="when">${at === null ? '' : localTime(at, time)}</span><span class="what">${what}</span></li>`,
  )}</ol><p class="where">The file is now at ${where}.</p>`;
}

function batches(list: readonly StoredBatch[], total: number, time: TimeFormat): Html {
  const columns: Column[] = [
    { label: 'Batch', num: true, head: true },
    { label: 'Lines', num: true },
    { label: 'Sent', num: true },
    { label: 'Accepted', num: true },
    { label: 'Refused', num: true },
    { label: 'Superseded', num: true },
    { label: 'Committed' },
  ];
  const rows = list.map((b) => ({
    cells: [
      count(b.batch_index + 1),
      b.last_line === 0 ? '–' : `${count(b.first_line)}–${count(b.last_line)}`,
      count(b.rows_sent),
      count(b.rows_accepted),
      count(b.rows_failed),
      count(b.rows_superseded),
      localTime(b.committed_at, time),
    ],
  }));
  const more = total > list.length ? html`<p class="muted">The first ${count(list.length)} of ${count(total)} batches.</p>` : '';
  return html`${dataTable(columns, rows, 'No batch committed yet.')}${more}`;
}

function rejects(d: ConsoleFileDetail): Html {
  const width = Math.max(0, ...d.first_rejects.map((r) => r.raw.length));
  const columns: Column[] = [
    { label: 'Line', num: true, head: true },
    { label: 'Field' },
    { label: 'Code' },
    { label: 'Message', text: true },
    // The file's own column names (from its rejects CSV), then the fields beyond its header.
    ...Array.from({ length: width }, (_, i) => ({ label: d.columns?.[i] ?? (d.columns === null ? `Column ${i + 1}` : `extra_${i + 1 - d.columns.length}`) })),
  ];
  // Every problem of a row, as the rejects CSV lists them ("; " between them).
  const rows = d.first_rejects.map((r) => {
    const [field, code, message] = problemColumns(r.errors);
    return {
      attrs: html` data-line="${r.line}"`,
      cells: [count(r.line), field === '' ? '–' : field, html`<code>${code}</code>`, message, ...Array.from({ length: width }, (_, i) => r.raw[i] ?? '')],
    };
  });
  const more =
    d.rejects_total > d.first_rejects.length
      ? html`<p class="muted">The first ${count(d.first_rejects.length)} of ${count(d.rejects_total)}: the rejects file has them all.</p>`
      : '';
  return html`${dataTable(columns, rows, 'No row was rejected.')}${more}`;
}

/** A source drafted from a failed file (src/ingest/suggest/draft-source.ts). */
export interface FileSuggestion {
  readonly path: string;
  readonly yaml: string;
}

function suggestion(s: FileSuggestion): Html {
  return html`<p>What the file itself says about its layout, as <code>pricing-agent sources suggest</code> drafts it: compare it with the
source's entry in the config. To see its rows as they would be sent: <code>pricing-agent sources suggest ${JSON.stringify(s.path)} --preview 10</code></p>
<pre class="suggestion">${s.yaml}</pre>`;
}

/** Why a held file waits, what it would have done (its preview), and the command that sends it after all. */
function heldSection(held: HeldDetail): Html {
  const p = held.preview;
  const command = html`<p>Nothing of it was sent. To send it after all: <code class="release">${held.release_command}</code></p>`;
  if (p === null) return html`${command}<p class="empty">Its preview could not be read.</p>`;
  const r = p.rows;
  const moves = p.largest_price_moves.map((m) => ({
    cells: [String(m.line), m.key === null ? '' : Object.values(m.key).join(' · '), m.before, m.after, m.move_pct === null ? '' : `${m.move_pct} %`],
  }));
  const missing = p.first_missing_keys.map((k) => ({ cells: [k.key === null ? '' : Object.values(k.key).join(' · '), k.id === null ? '' : String(k.id)] }));
  return html`<ul class="brakes">${p.brakes.map((b) => html`<li>${b.message}</li>`)}</ul>${command}
${figures([
  ['Compared', count(r.compared)],
  ['Unchanged', count(r.unchanged)],
  ['Changed', count(r.changed), r.changed > 0 ? 'bad' : undefined],
  ['New', count(r.new)],
  ['Changed on the platform', count(r.changed_on_platform)],
  ['Remapped', count(r.remapped)],
  ['Missing', count(r.missing), r.missing > 0 ? 'bad' : undefined],
])}
<h3>Largest price moves</h3>
${dataTable([{ label: 'Line', num: true }, { label: 'Key', head: true }, { label: 'Before', num: true }, { label: 'After', num: true }, { label: 'Move', num: true }], moves, 'No price moves.')}
<h3>First missing keys</h3>
${dataTable([{ label: 'Key', head: true }, { label: 'Platform id' }], missing, 'No key is missing.')}`;
}

export function fileBody(d: ConsoleFileDetail, time: TimeFormat, suggested: FileSuggestion | null = null): Html {
  const f = d.file;
  const rejected = f.rows_rejected ?? d.rejects_total;
  const superseded = f.rows_superseded ?? d.counts.superseded;
  const merged = f.rows_merged ?? d.counts.merged;
  const unchanged = (f as { rows_unchanged?: unknown }).rows_unchanged;
  const name = (path: string | null) => (path === null ? '' : basename(path));
  return html`<h1>${f.original_name} ${statusPill(d.status)}<span class="sub">#${f.id} · source ${f.source} · ${f.entity} · ${f.mode}</span></h1>
${figures([
  ['Read', count(f.rows_read)],
  ['Accepted', count(f.rows_accepted ?? d.counts.accepted), 'ok'],
  ['Rejected', count(rejected), rejected > 0 ? 'bad' : undefined],
  ['Superseded', count(superseded)],
  ...(merged > 0 ? [['Merged', count(merged)] as const] : []),
  ...(typeof unchanged === 'number' ? [['Unchanged', count(unchanged)] as const] : []),
])}
<div class="downloads">${downloadLinks(
  { id: f.id, report_path: d.report_path, rejects_path: d.rejects_path },
  { className: 'button', separator: ' ', report: `Report: ${name(d.report_path)}`, rejects: `Rejects: ${name(d.rejects_path)}` },
)}</div>
${d.held !== null && section('held', 'Held by the brakes', heldSection(d.held))}
${section('history', 'History', history(d, time))}
${suggested !== null && section('suggest', 'A source drafted from this file', suggestion(suggested))}
${section('rejects', 'First rejects', rejects(d), html`${count(d.rejects_total)} in all`)}
${d.batches.length > 0 && section('batches', 'Batches', batches(d.batches, d.counts.batches, time))}
${section(
  'report',
  'Report',
  d.report_text === null ? html`<p class="empty">No report yet: it is written when the file leaves processing/.</p>` : html`<pre>${d.report_text}</pre>`,
  d.report_path === null ? undefined : html`<code>${d.report_path}</code>`,
)}`;
}
