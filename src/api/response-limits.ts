/**
 * Every response has a size and every attempt a deadline (issue 27, point 3). A 3 GB body on /v1/auth/verify took
 * `check` past 8 GB of memory, and a server dripping one byte every two seconds held a pull forever, because
 * api.timeout_ms (undici's headers and body timeouts) is a gap between chunks, not a bound on the whole.
 *
 * - api.max_response_bytes: counted while the body streams in (and refused at once from Content-Length), so memory
 *   stays bounded whatever the server sends; the body is destroyed, which closes the connection.
 * - api.attempt_deadline_ms: one attempt (connect, request, headers and body) ends by then, however the server
 *   paces its bytes.
 *
 * Both are a failed attempt for the retry policy (a transport failure: retried unless the request was unsafe), with
 * a message that names the config key.
 */
import type { Readable } from 'node:stream';

/**
 * Far above the largest page the API document allows (10,000 rows of /v1/transactions or grid rows, a few MB), and
 * far below what fills the agent's memory.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024; // 64 MiB

/** Covers a large CSV upload on a slow line; a server that never finishes cannot hold an attempt longer. */
export const DEFAULT_ATTEMPT_DEADLINE_MS = 5 * 60 * 1000; // 5 min

export const RESPONSE_LIMIT_CODES = {
  tooLarge: 'RESPONSE_TOO_LARGE',
  deadline: 'ATTEMPT_DEADLINE',
} as const;
export type ResponseLimitCode = (typeof RESPONSE_LIMIT_CODES)[keyof typeof RESPONSE_LIMIT_CODES];

/** Thrown inside an attempt; the transport turns it into an ApiResponseLimitError. */
export class ResponseLimitError extends Error {
  readonly code: ResponseLimitCode;
  constructor(code: ResponseLimitCode, message: string) {
    super(message);
    this.name = 'ResponseLimitError';
    this.code = code;
  }
}

export function tooLargeError(what: string, maxBytes: number): ResponseLimitError {
  return new ResponseLimitError(
    RESPONSE_LIMIT_CODES.tooLarge,
    `the response to ${what} is larger than api.max_response_bytes (${maxBytes} bytes); the agent stopped reading it. ` +
      'If the API really answers this much, raise api.max_response_bytes.',
  );
}

export function deadlineError(what: string, deadlineMs: number): ResponseLimitError {
  return new ResponseLimitError(
    RESPONSE_LIMIT_CODES.deadline,
    `${what} did not complete within api.attempt_deadline_ms (${deadlineMs} ms for connect, headers and body); ` +
      'if the API is this slow on purpose, raise api.attempt_deadline_ms.',
  );
}

/**
 * Reads a whole body as UTF-8 text, at most `maxBytes` of it. Over the bound (announced by Content-Length, or
 * counted as the chunks arrive) the body is destroyed and a ResponseLimitError thrown: never more than `maxBytes`
 * (plus one chunk) is held.
 */
export async function readBodyLimited(
  body: Readable,
  maxBytes: number,
  contentLength: string | string[] | undefined,
  what: string,
): Promise<string> {
  const announced = Number(Array.isArray(contentLength) ? contentLength[0] : contentLength);
  if (Number.isFinite(announced) && announced > maxBytes) {
    const error = tooLargeError(what, maxBytes);
    body.destroy();
    throw error;
  }
  const decoder = new TextDecoder();
  let read = 0;
  let text = '';
  for await (const chunk of body as AsyncIterable<Buffer>) {
    read += chunk.length;
    if (read > maxBytes) {
      const error = tooLargeError(what, maxBytes);
      body.destroy();
      throw error;
    }
    text += decoder.decode(chunk, { stream: true });
  }
  return text + decoder.decode();
}
