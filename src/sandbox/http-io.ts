/**
 * What a handler returns and how it goes on the wire. Handlers never write to the response themselves: they return
 * a Reply, and the server decides whether to send it or, for the "dropped after commit" fault, to destroy the
 * socket instead. That is what makes "the write happened but the client never heard" reproducible.
 *
 * Error bodies (our documented choice, docs/sandbox.md): `{"detail": "<message>"}` for 401, 403, 404, 405, 413,
 * 429 and 5xx; 422 is the spec's HTTPValidationError; 409 of acknowledge is `{"detail": {message, conflicts}}`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ValidationError } from '../api/schemas/index.ts';
import { parseJsonText } from '../json-text.ts';

export interface Reply {
  readonly status: number;
  /** A JSON value; undefined sends no body (204). */
  readonly body?: unknown;
  /** Pre-serialized JSON, sent as is (replayed delivery pages must be byte-identical). */
  readonly raw?: string;
  /** Pre-encoded JSON bytes (bulk responses, bulk-response.ts). */
  readonly bytes?: Buffer;
  readonly headers?: Readonly<Record<string, string>>;
}

export function json(status: number, body: unknown, headers?: Record<string, string>): Reply {
  return headers ? { status, body, headers } : { status, body };
}

export function detail(status: number, message: string, headers?: Record<string, string>): Reply {
  return json(status, { detail: message }, headers);
}

export function invalid(errors: ValidationError[]): Reply {
  return json(422, { detail: errors });
}

/** A single 422 entry, FastAPI style. */
export function validationError(loc: (string | number)[], msg: string, type: string, input?: unknown): ValidationError {
  return input === undefined ? { loc, msg, type } : { loc, msg, type, input };
}

export const NO_CONTENT: Reply = { status: 204 };
export const NOT_FOUND: Reply = detail(404, 'Not Found');

export function writeReply(res: ServerResponse, reply: Reply): void {
  const headers: Record<string, string | number> = { ...reply.headers };
  if (reply.status === 204 || (reply.raw === undefined && reply.bytes === undefined && reply.body === undefined)) {
    res.writeHead(reply.status, headers);
    res.end();
    return;
  }
  // A Buffer, not the string: node:http would glue its header block to a string body, and encoding that
  // concatenated string was 8 % of the bulk path's time.
  const payload = reply.bytes ?? Buffer.from(reply.raw ?? JSON.stringify(reply.body), 'utf8');
  headers['content-type'] = 'application/json';
  headers['content-length'] = payload.length;
  res.writeHead(reply.status, headers);
  res.end(payload);
}

export class BodyTooLargeError extends Error {
  readonly code = 'SANDBOX_BODY_TOO_LARGE';
}

/** Reads a whole request body; rejects with BodyTooLargeError past `maxBytes` (the rest is drained, not held). */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) tooLarge = true;
      if (!tooLarge) chunks.push(chunk);
    });
    req.on('end', () => {
      if (tooLarge) reject(new BodyTooLargeError(`request body larger than ${maxBytes} bytes`));
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
    req.on('error', reject);
  });
}

export type ParsedJson = { ok: true; value: unknown } | { ok: false; reply: Reply };

/**
 * JSON.parse once per request; an empty body is `undefined` (a missing body, reported by the schema). Through
 * parseJsonText: V8's JSON.parse can misread a key written with an escape (json-text.ts).
 */
export function parseJson(buffer: Buffer): ParsedJson {
  if (buffer.length === 0) return { ok: true, value: undefined };
  const items = parseItemsInPieces(buffer);
  if (items !== null) return { ok: true, value: { items } };
  try {
    return { ok: true, value: parseJsonText(buffer.toString('utf8')) };
  } catch (error) {
    const msg = error instanceof Error ? error.message : 'invalid JSON';
    return { ok: false, reply: invalid([validationError(['body'], `JSON decode error: ${msg}`, 'json_invalid')]) };
  }
}

/** A request's JSON body of at most `maxBytes`: its value, or the reply to send (413 past the limit, 422 bad JSON). */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<ParsedJson> {
  let buffer: Buffer;
  try {
    buffer = await readBody(req, maxBytes);
  } catch (error) {
    if (error instanceof BodyTooLargeError) return { ok: false, reply: detail(413, error.message) };
    throw error;
  }
  return parseJson(buffer);
}

const ITEMS_OPEN = Buffer.from('{"items":[', 'latin1');
const BETWEEN_OBJECTS = Buffer.from('},{', 'latin1');
/** Bytes of a piece before its end is looked for: its string stays below V8's large-object size (128 KiB). */
const PIECE_BYTES = 48 * 1024;

/**
 * The items of a bulk body `{"items":[{...},{...},...]}`, parsed in pieces of about 48 KiB cut between two items
 * (at a `},{`), or null when the body is anything else or a piece does not parse (then JSON.parse of the whole
 * body decides, and words any error). A bulk body is a quarter of a megabyte: as one string it went to V8's
 * large-object space, fresh pages from the kernel for every request; pieces are ordinary strings.
 *
 * Exact: each piece is parsed as `[` piece `]`. A cut that is not between two items of the array (inside a string,
 * or between two objects nested deeper) leaves an unterminated string or unclosed brackets in the piece before it,
 * which then does not parse. So when every piece parses, the body is `{"items":[` + a list of values + `]}`, whose
 * JSON.parse is an object with that one key and those values, parsed the same way (UTF-8 is decoded the same way
 * too: the cuts are at ASCII bytes, never inside a character).
 */
function parseItemsInPieces(buffer: Buffer): unknown[] | null {
  const end = buffer.length - 2; // the closing ]
  if (end < ITEMS_OPEN.length || buffer[end] !== 0x5d || buffer[end + 1] !== 0x7d) return null;
  if (buffer.compare(ITEMS_OPEN, 0, ITEMS_OPEN.length, 0, ITEMS_OPEN.length) !== 0) return null;
  let items: unknown[] = [];
  let start = ITEMS_OPEN.length - 1; // the opening [, then the comma before each piece
  while (start < end) {
    let cut = end;
    if (end - start > 2 * PIECE_BYTES) {
      const at = buffer.indexOf(BETWEEN_OBJECTS, start + PIECE_BYTES);
      if (at >= 0 && at < end) cut = at + 1; // the comma
    }
    // The piece between brackets: the byte before it and the one after are turned into [ and ] for the parse.
    const before = buffer[start]!;
    const after = buffer[cut]!;
    buffer[start] = 0x5b;
    buffer[cut] = 0x5d;
    let piece: unknown;
    try {
      piece = parseJsonText(buffer.toString('utf8', start, cut + 1));
    } catch {
      return null;
    } finally {
      buffer[start] = before;
      buffer[cut] = after;
    }
    if (!Array.isArray(piece)) return null;
    items = items.length === 0 ? piece : items.concat(piece);
    start = cut;
  }
  return items;
}

/** The path without its query string, and the query; no URL object per request on the hot path. */
export function splitUrl(url: string): { path: string; query: URLSearchParams } {
  const q = url.indexOf('?');
  if (q < 0) return { path: url, query: EMPTY_QUERY };
  return { path: url.slice(0, q), query: new URLSearchParams(url.slice(q + 1)) };
}

const EMPTY_QUERY = new URLSearchParams();

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
