/**
 * The console's routes on the daemon's local HTTP server (src/daemon/http-server.ts hands over what is not
 * /healthz, /readyz or /metrics):
 *
 *   /                        the overview (overview-page.ts)
 *   /files?source=&status=   the files (files-page.ts)
 *   /files/ID                one file (file-page.ts); a failed one with a source drafted from it (sources suggest)
 *   /files/ID/report.json    its report, as a download (the file beside the archived file, byte for byte)
 *   /files/ID/rejects.csv    its rejects, as a download
 *
 * Read-only: GET and HEAD only (the server refuses the rest), nothing here writes. A file is reached by its ledger id
 * only, never by a path from the request. Every page forbids scripts, frames and anything from elsewhere
 * (Content-Security-Policy). The server in front has already checked that the request names this machine
 * (src/daemon/host-check.ts: DNS rebinding).
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { basename } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { attachmentDisposition } from './content-disposition.ts';
import { consoleFile, consoleFiles, consoleStatus, type ConsoleContext } from './console-data.ts';
import { ENTITIES } from '../api/schemas/index.ts';
import { draftSource } from '../ingest/suggest/draft-source.ts';
import { sampleFile } from '../ingest/suggest/sample-file.ts';
import { fileBody, type FileSuggestion } from './file-page.ts';
import { filesBody, filesQuery, FILES_PAGE_LIMIT } from './files-page.ts';
import type { TimeFormat } from './format.ts';
import { html, type Html } from './html.ts';
import { page } from './layout.ts';
import { overviewBody, OVERVIEW_FILES } from './overview-page.ts';

export type { ConsoleContext } from './console-data.ts';

/** Handles a console request; false when the path is not the console's (the server answers 404). */
export type ConsoleHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
} as const;

function send(res: ServerResponse, status: number, body: Html | string, type = 'text/html; charset=utf-8'): void {
  const text = typeof body === 'string' ? body : body.text;
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(text) });
  res.end(res.req.method === 'HEAD' ? undefined : text);
}

async function download(res: ServerResponse, path: string | null, type: string): Promise<boolean> {
  const size = path === null ? null : await stat(path).then((s) => s.size, () => null);
  if (path === null || size === null) return false;
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'content-type': type,
    'content-length': size,
    'content-disposition': attachmentDisposition(basename(path)),
  });
  if (res.req.method === 'HEAD') res.end();
  else await pipeline(createReadStream(path), res);
  return true;
}

/**
 * A source drafted from a failed file (`sources suggest`), for its page: what the file itself says about its
 * layout, beside why it failed. Null when the file is gone or cannot be read as a table.
 */
async function suggestFor(path: string | null, entityName: string): Promise<FileSuggestion | null> {
  if (path === null) return null;
  const entity = ENTITIES.find((e) => e === entityName);
  try {
    const draft = draftSource({ sample: await sampleFile(path), fileName: basename(path), entity, set: {} });
    return { path, yaml: draft.yaml };
  } catch {
    return null;
  }
}

export function consoleHandler(ctx: ConsoleContext, zone: Pick<TimeFormat, 'timeZone'> = {}): ConsoleHandler {
  const frame = (title: string, nav: 'overview' | 'files', body: Html, refresh = true) =>
    page({ title, nav, now: ctx.now(), time: zone, ready: ctx.readiness().ready, role: ctx.role?.(), refresh, body });
  const notFound = (res: ServerResponse, what: string) =>
    send(res, 404, frame('Not found', 'files', html`<h1>Not found</h1><p>${what}</p><p><a href="/">Back to the overview</a></p>`, false));

  return async (req, res) => {
    const time: TimeFormat = { ...zone, now: ctx.now() };
    const url = new URL(req.url ?? '/', 'http://console');
    const path = url.pathname;
    const fileRoute = /^\/files\/(\d{1,15})(?:\/(report\.json|rejects\.csv))?$/.exec(path);
    if (path !== '/' && path !== '/files' && fileRoute === null) return false;
    if (path === '/') {
      const [report, files] = await Promise.all([consoleStatus(ctx), consoleFiles(ctx, { limit: OVERVIEW_FILES })]);
      send(res, 200, frame('Overview', 'overview', overviewBody(report, files, time)));
      return true;
    }
    if (path === '/files') {
      const query = filesQuery(url.searchParams);
      const files = await consoleFiles(ctx, { ...query, limit: FILES_PAGE_LIMIT });
      const sources = ctx.config().sources.map((s) => s.name);
      send(res, 200, frame('Files', 'files', filesBody(files, query, sources, time)));
      return true;
    }
    const id = Number(fileRoute?.[1]);
    const detail = await consoleFile(ctx, id);
    if (detail === undefined) {
      notFound(res, `No file #${id} in the ledger.`);
      return true;
    }
    const part = fileRoute?.[2];
    if (part === 'report.json') {
      if (!(await download(res, detail.report_path, 'application/json; charset=utf-8'))) notFound(res, `File #${id} has no report (yet).`);
      return true;
    }
    if (part === 'rejects.csv') {
      if (!(await download(res, detail.rejects_path, 'text/csv; charset=utf-8'))) notFound(res, `File #${id} has no rejects file.`);
      return true;
    }
    const finished = detail.file.finished_at !== null;
    const suggestion = detail.status === 'failed' ? await suggestFor(detail.file.final_path, detail.file.entity) : null;
    send(res, 200, frame(`#${id} ${detail.file.original_name}`, 'files', fileBody(detail, time, suggestion), !finished));
    return true;
  };
}
