/**
 * Opening a file for reading: the BOM, the decoder, and the first lines (for delimiter detection and the
 * EMPTY_FILE check), without reading more of the file than the first chunk or two.
 * What comes out is an async iterable of decoded chunks for the CSV parser, starting at the first byte.
 *
 * `ranges` reads the file as if it held only those bytes (after the BOM, in order): delta push's first pass reads a
 * large file in two halves on two threads, each half as the header line followed by its own lines
 * (delta/two-halves.ts). The ranges start and end at line breaks of an ASCII-compatible encoding.
 */
import { openInboxFile } from '../inbox-file.ts';
import type { FileHandle } from 'node:fs/promises';
import type { Encoding } from '../../config/source-schema.ts';
import { sniffBom } from './bom.ts';
import type { BomResult } from './bom.ts';
import { createDecoder } from './decoders.ts';
import { DecodeError, FileFormatError } from './errors.ts';
import { HEADER_SEARCH_LINES } from './header-rows.ts';
import { decodeFailure } from './line-at.ts';

/** Stop looking for the end of the first line after this much text: detection then uses what it has. */
const FIRST_LINE_LIMIT = 1024 * 1024; // 1 MiB

export type Chunk = Buffer | string;

export interface OpenedSource {
  readonly bom: BomResult;
  readonly totalBytes: number;
  /**
   * The first lines' text, without their line breaks: at least the first line (and the first with content), up to
   * HEADER_SEARCH_LINES of those in the first chunks read (delimiter detection, delimiter.ts). The last may be cut.
   */
  readonly headLines: readonly string[];
  /** Decoded chunks from the start of the file (after the BOM); iterate once. */
  readonly chunks: AsyncIterable<Chunk>;
  /** Bytes taken from the file so far, the BOM included. */
  bytesRead(): number;
  /** Stops reading and closes the file; safe to call more than once. */
  close(): void;
}

function textOf(chunk: Chunk): string {
  return typeof chunk === 'string' ? chunk : chunk.toString('utf8');
}

/** Bytes `start` (inclusive) to `end` (exclusive) of a file. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/** `length` bytes of the file from `at` (a range ending at `end`), in as many reads as it takes. */
async function readPiece(handle: FileHandle, at: number, length: number, end: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  for (let filled = 0; filled < length; ) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, at + filled);
    if (bytesRead === 0) throw new Error(`the file ended at byte ${at + filled}, before byte ${end}: it changed while it was read`);
    filled += bytesRead;
  }
  return buffer;
}

/**
 * The bytes of `ranges`, in order, in pieces of at most `highWaterMark`. The next piece is read while the current one
 * is handed on, as a read stream does: read one after the other, the reader waited for each (delta push's first pass
 * idled 5 % of its time).
 */
async function* rangeBytes(handle: FileHandle, ranges: readonly ByteRange[], highWaterMark: number): AsyncGenerator<Buffer> {
  const pieces: { at: number; length: number; end: number }[] = [];
  for (const { start, end } of ranges) {
    for (let at = start; at < end; at += highWaterMark) pieces.push({ at, length: Math.min(highWaterMark, end - at), end });
  }
  const read = (i: number): Promise<Buffer> | null => {
    const piece = pieces[i];
    if (piece === undefined) return null;
    const reading = readPiece(handle, piece.at, piece.length, piece.end);
    reading.catch(() => undefined); // awaited below, or dropped when the reader stops early (the file is closed)
    return reading;
  };
  let next = read(0);
  for (let i = 0; next !== null; i++) {
    const current = await next;
    next = read(i + 1);
    yield current;
  }
}

export async function openSource(
  file: string,
  configured: Encoding,
  highWaterMark = 64 * 1024,
  ranges?: readonly ByteRange[],
): Promise<OpenedSource> {
  const handle: FileHandle = await openInboxFile(file);
  let bom: BomResult;
  let totalBytes: number;
  try {
    totalBytes = (await handle.stat()).size;
    const head = Buffer.alloc(3);
    const { bytesRead } = await handle.read(head, 0, 3, 0);
    bom = sniffBom(head.subarray(0, bytesRead), configured);
  } catch (error) {
    await handle.close();
    throw error;
  }
  const stream = ranges === undefined ? handle.createReadStream({ start: bom.bomLength, highWaterMark }) : null;
  const bytes = stream === null ? rangeBytes(handle, ranges ?? [], highWaterMark) : (stream as AsyncIterable<Buffer>);
  const decoder = createDecoder(bom.encoding, bom.bomLength);
  let taken = bom.bomLength;
  let closed = false;

  async function* decoded(): AsyncGenerator<Chunk> {
    for await (const chunk of bytes) {
      taken += chunk.length;
      const out = decoder.write(chunk);
      if (out.length > 0) yield out;
    }
    const tail = decoder.end();
    if (tail.length > 0) yield tail;
  }

  const close = () => {
    if (stream !== null) {
      if (!stream.destroyed) stream.destroy();
    } else if (!closed) {
      closed = true;
      // Waits for a read in progress before closing; the generator's next read then fails, and nobody asks for it.
      handle.close().catch(() => undefined);
    }
  };
  const source = decoded();
  const prefix: Chunk[] = [];
  let text = '';
  let ended = false;
  try {
    while (!/[\r\n]/.test(text) && text.length < FIRST_LINE_LIMIT) {
      const next = await source.next();
      if (next.done === true) {
        ended = true;
        break;
      }
      prefix.push(next.value);
      text += textOf(next.value);
    }
    if (text.trim() === '') {
      // Nothing on line 1: an empty file, or a header further down (a spreadsheet saved with empty rows on top,
      // header-rows.ts). Read on to the first content, keeping what was read for the parser.
      while (text.trim() === '' && !ended && text.length < FIRST_LINE_LIMIT) {
        const next = await source.next();
        if (next.done === true) ended = true;
        else {
          prefix.push(next.value);
          text += textOf(next.value);
        }
      }
      if (text.trim() === '' && ended) throw new FileFormatError('EMPTY_FILE', 'the file is empty', { file });
    }
    const headLines = text.split(/\r\n|\r|\n/, HEADER_SEARCH_LINES);
    async function* chunks(): AsyncGenerator<Chunk> {
      yield* prefix;
      prefix.length = 0;
      yield* source;
    }
    return { bom, totalBytes, headLines, chunks: chunks(), bytesRead: () => taken, close };
  } catch (error) {
    close();
    throw error instanceof DecodeError ? await decodeFailure(file, bom, error) : error;
  }
}
