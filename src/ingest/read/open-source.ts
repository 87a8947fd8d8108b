/**
 * Opening a file for reading: the BOM, the decoder, and the first line (for delimiter detection and the
 * EMPTY_FILE / NO_HEADER checks), without reading more of the file than the first chunk or two.
 * What comes out is an async iterable of decoded chunks for the CSV parser, starting at the first byte.
 */
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import type { Encoding } from '../../config/source-schema.ts';
import { sniffBom } from './bom.ts';
import type { BomResult } from './bom.ts';
import { createDecoder } from './decoders.ts';
import { DecodeError, FileFormatError } from './errors.ts';
import { decodeFailure } from './line-at.ts';

/** Stop looking for the end of the first line after this much text: detection then uses what it has. */
const FIRST_LINE_LIMIT = 1024 * 1024; // 1 MiB

export type Chunk = Buffer | string;

export interface OpenedSource {
  readonly bom: BomResult;
  readonly totalBytes: number;
  /** The first line's text, without its line break. */
  readonly firstLine: string;
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

export async function openSource(
  file: string,
  configured: Encoding,
  highWaterMark = 64 * 1024,
): Promise<OpenedSource> {
  const handle: FileHandle = await open(file, 'r');
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
  const stream = handle.createReadStream({ start: bom.bomLength, highWaterMark });
  const decoder = createDecoder(bom.encoding, bom.bomLength);
  let taken = bom.bomLength;

  async function* decoded(): AsyncGenerator<Chunk> {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      taken += chunk.length;
      const out = decoder.write(chunk);
      if (out.length > 0) yield out;
    }
    const tail = decoder.end();
    if (tail.length > 0) yield tail;
  }

  const close = () => {
    if (!stream.destroyed) stream.destroy();
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
    const firstLine = text.split(/\r\n|\r|\n/, 1)[0] ?? '';
    if (firstLine.trim() === '') {
      // Nothing on line 1: an empty file, or a header that is not where it must be. Look for any content.
      let rest = text;
      while (rest.trim() === '' && !ended) {
        const next = await source.next();
        if (next.done === true) ended = true;
        else rest = textOf(next.value);
      }
      if (rest.trim() === '') throw new FileFormatError('EMPTY_FILE', 'the file is empty', { file });
      throw new FileFormatError('NO_HEADER', 'line 1 is empty: the header must be the first line', {
        file,
        line: 1,
      });
    }
    async function* chunks(): AsyncGenerator<Chunk> {
      yield* prefix;
      prefix.length = 0;
      yield* source;
    }
    return { bom, totalBytes, firstLine, chunks: chunks(), bytesRead: () => taken, close };
  } catch (error) {
    close();
    throw error instanceof DecodeError ? await decodeFailure(file, bom, error) : error;
  }
}
