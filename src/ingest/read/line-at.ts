/**
 * The line a byte offset is on, for decoding errors. Computed on the error path only, by reading the file's
 * prefix again: the happy path pays nothing for it. The bytes before the offset were valid, so line breaks can
 * be counted on raw code units: in UTF-8 and the single-byte code pages a CR or LF byte is always that
 * character; in UTF-16 it is a 2-byte unit. CRLF counts as one break, lone CR and lone LF as one each.
 */
import { openInboxFile } from '../inbox-file.ts';
import type { BomResult } from './bom.ts';
import { unitWidth } from './decoders.ts';
import { FileFormatError } from './errors.ts';
import type { DecodeError } from './errors.ts';

const CR = 0x0d;
const LF = 0x0a;

export async function lineAt(
  file: string,
  start: number,
  offset: number,
  width: 1 | 2,
  bigEndian: boolean,
): Promise<number> {
  const handle = await openInboxFile(file);
  try {
    const buffer = Buffer.alloc(64 * 1024);
    let line = 1;
    let previous = -1;
    let position = start;
    while (position < offset) {
      const want = Math.min(buffer.length, offset - position);
      const { bytesRead } = await handle.read(buffer, 0, want - (want % width), position);
      if (bytesRead < width) break;
      for (let i = 0; i + width <= bytesRead; i += width) {
        const unit = width === 1 ? (buffer[i] ?? 0) : bigEndian ? buffer.readUInt16BE(i) : buffer.readUInt16LE(i);
        if (unit === LF) {
          if (previous !== CR) line++;
        } else if (unit === CR) line++;
        previous = unit;
      }
      position += bytesRead;
    }
    return line;
  } finally {
    await handle.close();
  }
}

/** A decoder's error as the file failure it causes, with the line counted from the start of the file. */
export async function decodeFailure(file: string, bom: BomResult, error: DecodeError): Promise<FileFormatError> {
  const { encoding, bomLength } = bom;
  const line = await lineAt(file, bomLength, error.byteOffset, unitWidth(encoding), encoding === 'utf-16be');
  const message = `${error.message}, on line ${line} at byte offset ${error.byteOffset} (read as ${encoding})`;
  return new FileFormatError(error.code, message, { file, line, byteOffset: error.byteOffset });
}
