/**
 * `/files?source=NAME&status=STATUS`: the push ledger, newest first, as `pricing-agent files list` shows it, with
 * filters by source and status and links to each file's page, report and rejects.
 */
import { FILE_STATUS_FILTERS, type FileStatusFilter } from '../status/file-list.ts';
import type { ConsoleFile } from './console-data.ts';
import { filesTable } from './file-table.ts';
import { type TimeFormat } from './format.ts';
import { html, type Html } from './html.ts';
import { section } from './layout.ts';

/** Files listed on one page. */
export const FILES_PAGE_LIMIT = 100;

export interface FilesQuery {
  readonly source?: string;
  readonly status?: FileStatusFilter;
}

/** The query string's filters; an unknown status is ignored (the page lists every status). */
export function filesQuery(params: URLSearchParams): FilesQuery {
  const source = params.get('source') ?? '';
  const status = params.get('status') ?? '';
  return {
    ...(source === '' ? {} : { source }),
    ...((FILE_STATUS_FILTERS as readonly string[]).includes(status) ? { status: status as FileStatusFilter } : {}),
  };
}

function href(query: FilesQuery): string {
  const params = new URLSearchParams();
  if (query.source !== undefined) params.set('source', query.source);
  if (query.status !== undefined) params.set('status', query.status);
  const text = params.toString();
  return text === '' ? '/files' : `/files?${text}`;
}

const STATUS_FILTERS: ReadonlyArray<readonly [FileStatusFilter | undefined, string]> = [
  [undefined, 'all'],
  ['processing', 'processing'],
  ['done', 'done'],
  ['failed', 'failed'],
  ['duplicate', 'duplicate'],
];

export function filesBody(files: readonly ConsoleFile[], query: FilesQuery, sources: readonly string[], time: TimeFormat): Html {
  const statusLinks = STATUS_FILTERS.map(
    ([status, label]) => html`<a href="${href({ ...query, status })}"${status === query.status && html` aria-current="true"`}>${label}</a>`,
  );
  const sourceLinks = [undefined, ...sources].map(
    (source) => html`<a href="${href({ ...query, source })}"${source === query.source && html` aria-current="true"`}>${source ?? 'every source'}</a>`,
  );
  const what = [query.source, query.status].filter((x) => x !== undefined).join(', ');
  return html`<h1>Files${what !== '' && html` <span class="sub">${what}</span>`}</h1>
<nav class="filters" aria-label="status">${statusLinks}</nav>
<nav class="filters" aria-label="source">${sourceLinks}</nav>
${section(
  'files',
  'Newest first',
  filesTable(files, time, 'No file matches.'),
  html`${files.length >= FILES_PAGE_LIMIT ? `the newest ${FILES_PAGE_LIMIT}; pricing-agent files list --limit N shows more` : `${files.length} files`}`,
)}`;
}
