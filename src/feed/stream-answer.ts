/**
 * Large answers (`/changes` pages, `/current` snapshots) written as the client reads them, so that a client that
 * reads slowly or not at all costs the listener one slice, not a page, and the event loop is never held by one
 * answer for more than the serialization of one slice.
 *
 * The parts (rows, as text; an async iterable when they are read from the database as the answer goes, as a `/current`
 * snapshot's pages are) are gathered into slices of about SLICE_BYTES. A slice is written only when the response has
 * taken the one before: when `write` says the response is full (its high-water mark, 64 KiB), the next slice waits for
 * `drain`; otherwise for the next turn of the event loop (`setImmediate`), so that other requests run between slices.
 * A client that takes nothing for `stallMs` while a slice waits has its connection destroyed, as the listener does
 * with a finished answer left unread (server.ts). A response that closes before the end (the client went away, or the
 * listener destroyed a connection whose answer was not read in time) stops the writing: the rest is never serialized.
 * The bytes an answer holds are therefore at most the high-water mark, one slice and one part (ANSWER_BUFFER_BOUND,
 * consumer-load.ts). A page read that fails after the status was sent closes the connection: the client sees the
 * answer cut short, never a whole-looking one.
 *
 * The answer goes out with chunked transfer encoding: its length is not known before its end. A client that reads
 * it to the end gets exactly the text the parts make.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { COMMON_HEADERS } from './http.ts';

/** Text gathered before a write. */
export const SLICE_BYTES = 64 * 1024; // 64 KiB

/**
 * Writes a 200 (or `status`) answer of `contentType` made of `parts`, slice by slice; `onSlice` counts each slice's
 * bytes. Resolves true when the answer was written to its end, false when the response closed first.
 */
export async function streamAnswer(
  res: ServerResponse,
  status: number,
  contentType: string,
  parts: Iterable<string> | AsyncIterable<string>,
  headers: OutgoingHttpHeaders,
  options: { readonly stallMs: number; readonly onSlice: (bytes: number) => void },
): Promise<boolean> {
  if (res.headersSent) return false;
  res.writeHead(status, { ...COMMON_HEADERS, 'content-type': `${contentType}; charset=utf-8`, ...headers });
  let slice = '';
  try {
    // Leaving the loop early (a closed response) returns the parts' iterator: a generator reading pages reads no more.
    for await (const part of parts) {
      slice += part;
      if (slice.length < SLICE_BYTES) continue; // UTF-16 units: a slice of non-ASCII text is at most 3 times this
      if (!(await writeSlice(res, slice, options))) return false;
      slice = '';
    }
  } catch (error) {
    // The status is sent already: the client learns of the failure from a connection closed before the answer's end.
    res.destroy();
    throw error;
  }
  if (slice !== '' && !(await writeSlice(res, slice, options))) return false;
  if (res.destroyed) return false;
  res.end();
  return true;
}

/** Writes one slice, then waits until the response may take the next; false when it closed. */
async function writeSlice(res: ServerResponse, slice: string, options: { readonly stallMs: number; readonly onSlice: (bytes: number) => void }): Promise<boolean> {
  if (res.destroyed || res.writableEnded) return false;
  options.onSlice(Buffer.byteLength(slice));
  if (res.write(slice)) {
    await nextTurn();
    return !res.destroyed;
  }
  return drained(res, options.stallMs);
}

/** Resolves true on the response's `drain`, false when it closes first or `stallMs` pass (the connection destroyed). */
function drained(res: ServerResponse, stallMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const onDrain = () => done(true);
    const onClose = () => done(false);
    const stalled = setTimeout(() => res.socket?.destroy(), stallMs); // then `close` ends the wait
    stalled.unref();
    const done = (ok: boolean) => {
      clearTimeout(stalled);
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    res.on('drain', onDrain);
    res.on('close', onClose);
    if (res.destroyed) done(false);
  });
}
