/**
 * The feed's HTTP plumbing: errors as `{"detail": ...}`, the three answer formats chosen by `Accept`, bounded JSON
 * request bodies. Nothing here knows a consumer or a token.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** An answer that is not a success: status, a sentence for the client, extra headers (Retry-After, Allow, ...). */
export class FeedHttpError extends Error {
  override readonly name = 'FeedHttpError';
  readonly status: number;
  readonly headers: OutgoingHttpHeaders;

  constructor(status: number, detail: string, headers: OutgoingHttpHeaders = {}) {
    super(detail);
    this.status = status;
    this.headers = headers;
  }

  /** The same answer, after which the connection is closed. */
  closing(): FeedHttpError {
    return new FeedHttpError(this.status, this.message, { ...this.headers, connection: 'close' });
  }
}

export const COMMON_HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' } as const;

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders = {}): void {
  send(res, status, 'application/json', `${JSON.stringify(body)}\n`, headers);
}

export function sendError(res: ServerResponse, error: FeedHttpError): void {
  sendJson(res, error.status, { detail: error.message }, error.headers);
}

export function sendEmpty(res: ServerResponse, status: number, headers: OutgoingHttpHeaders = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, { ...COMMON_HEADERS, ...headers });
  res.end();
}

export function send(res: ServerResponse, status: number, contentType: string, body: string, headers: OutgoingHttpHeaders = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, {
    ...COMMON_HEADERS,
    'content-type': `${contentType}; charset=utf-8`,
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

export const FEED_FORMATS = ['json', 'ndjson', 'csv'] as const;
export type FeedFormat = (typeof FEED_FORMATS)[number];

const MEDIA_TYPES: Record<string, FeedFormat> = {
  'application/json': 'json',
  'application/x-ndjson': 'ndjson',
  'application/ndjson': 'ndjson',
  'application/jsonl': 'ndjson',
  'text/csv': 'csv',
};

export const CONTENT_TYPES: Record<FeedFormat, string> = { json: 'application/json', ndjson: 'application/x-ndjson', csv: 'text/csv' };

/**
 * The format an `Accept` header asks for: the acceptable type with the highest q (the first of equals); JSON for no
 * header, `*` + `/*` or `application/*`; null when nothing offered is acceptable (406).
 */
export function negotiate(accept: string | undefined): FeedFormat | null {
  if (accept === undefined || accept.trim() === '') return 'json';
  let best: { format: FeedFormat; q: number } | null = null;
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!(q > 0)) continue;
    const format = type === '*/*' || type === 'application/*' ? 'json' : MEDIA_TYPES[type];
    if (format !== undefined && (best === null || q > best.q)) best = { format, q };
  }
  return best?.format ?? null;
}

/**
 * Reads a request body of at most `maxBytes` and parses it as JSON (whatever the Content-Type says: `curl -d` sends a
 * form type). 413 beyond the bound (the connection is closed after the answer: the rest is not read), 400 when it is
 * not JSON.
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > maxBytes) throw tooLarge(maxBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) throw tooLarge(maxBytes);
      chunks.push(chunk);
    }
  } catch (error) {
    // A client that hangs up in the middle of its body went away: nobody to answer, nothing wrong with the agent.
    if (error instanceof FeedHttpError) throw error;
    throw new FeedHttpError(499, 'the client closed the connection while sending its body', { connection: 'close' });
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new FeedHttpError(400, 'the request body is not JSON (send e.g. {"seq": 1234} with Content-Type: application/json)');
  }
}

function tooLarge(maxBytes: number): FeedHttpError {
  return new FeedHttpError(413, `the request body is larger than ${maxBytes} bytes`, { connection: 'close' });
}
