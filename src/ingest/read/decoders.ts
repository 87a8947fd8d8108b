/**
 * Streaming decoders: file bytes in, text for the CSV parser out, one chunk at a time. Each throws a
 * DecodeError at the absolute byte offset of the first byte that is not valid in its encoding.
 *
 * - UTF-8 is validated, not decoded: valid bytes go to the parser as they are (it decodes them once). A sequence
 *   split between two reads is carried over to the next chunk.
 * - UTF-16 LE/BE: decoded here; an unpaired surrogate or an odd trailing byte is invalid.
 * - Windows-1252 via iconv-lite (Node's TextDecoder treats that label as Latin-1: 0x80 would not be €).
 *   Decision: the five bytes Windows-1252 leaves undefined (0x81 0x8D 0x8F 0x90 0x9D) are invalid. They never
 *   occur in text written in that code page; they do occur when a UTF-8 file is declared Windows-1252
 *   (Ł is C5 81), and decoding them to invisible control characters would corrupt names silently.
 * - ISO-8859-1: every byte maps to a character, but 0x80-0x9F are C1 control codes that real text never holds.
 *   Decision: they are invalid, with a hint: such a file is almost always Windows-1252 (0x80 is the euro sign).
 * - Everywhere: a NUL is invalid (a UTF-16 file without BOM read as UTF-8 is full of them), and a BOM after the
 *   start of the file (U+FEFF) fails the file as UNEXPECTED_BOM: it marks two files concatenated.
 */
import { isUtf8 } from 'node:buffer';
import iconv from 'iconv-lite';
import type { Encoding } from '../../config/source-schema.ts';
import { UTF8_BOM } from './bom.ts';
import { DecodeError } from './errors.ts';
import { findInvalidUtf8, incompleteTailLength } from './utf8.ts';

export interface ChunkDecoder {
  /** Bytes of the file in order; returns what can be handed to the parser now (possibly empty). */
  write(chunk: Buffer): Buffer | string;
  /** End of file: throws when a sequence is left incomplete. */
  end(): Buffer | string;
}

const NUL_HINT = 'a NUL byte (is the file UTF-16 without a byte-order mark? set `encoding: utf-16le`)';

function hex(byte: number): string {
  return `0x${byte.toString(16).toUpperCase().padStart(2, '0')}`;
}

/** Prepends the carried bytes of the previous chunk; returns the joined bytes and their file offset. */
class Carry {
  private pending: Buffer | null = null;
  /** File offset of the next byte to arrive. */
  private next: number;

  constructor(start: number) {
    this.next = start;
  }

  join(chunk: Buffer): { bytes: Buffer; offset: number } {
    const pending = this.pending;
    const offset = this.next - (pending?.length ?? 0);
    this.next += chunk.length;
    this.pending = null;
    return { bytes: pending === null ? chunk : Buffer.concat([pending, chunk]), offset };
  }

  /** Keeps the last `length` bytes for the next chunk (copied: the chunk itself is not retained). */
  hold(bytes: Buffer, length: number): Buffer {
    if (length === 0) return bytes;
    this.pending = Buffer.from(bytes.subarray(bytes.length - length));
    return bytes.subarray(0, bytes.length - length);
  }

  /** File offset of the bytes still held at the end of the file, or -1 when none. */
  leftover(): number {
    return this.pending === null ? -1 : this.next - this.pending.length;
  }
}

class Utf8Decoder implements ChunkDecoder {
  private readonly carry: Carry;

  constructor(start: number) {
    this.carry = new Carry(start);
  }

  write(chunk: Buffer): Buffer {
    const { bytes, offset } = this.carry.join(chunk);
    const body = this.carry.hold(bytes, incompleteTailLength(bytes));
    if (!isUtf8(body)) {
      const at = Math.max(findInvalidUtf8(body), 0);
      throw new DecodeError('INVALID_ENCODING', offset + at, `byte ${hex(body[at] ?? 0)} is not valid UTF-8`);
    }
    const nul = body.indexOf(0);
    if (nul >= 0) throw new DecodeError('INVALID_ENCODING', offset + nul, NUL_HINT);
    const bom = body.indexOf(UTF8_BOM);
    if (bom >= 0) throw new DecodeError('UNEXPECTED_BOM', offset + bom, 'a byte-order mark inside the file');
    return body;
  }

  end(): string {
    const at = this.carry.leftover();
    if (at >= 0) throw new DecodeError('INVALID_ENCODING', at, 'the file ends inside a UTF-8 sequence');
    return '';
  }
}

class Utf16Decoder implements ChunkDecoder {
  private readonly carry: Carry;
  private readonly bigEndian: boolean;

  constructor(start: number, bigEndian: boolean) {
    this.carry = new Carry(start);
    this.bigEndian = bigEndian;
  }

  write(chunk: Buffer): string {
    const { bytes, offset } = this.carry.join(chunk);
    let keep = bytes.length % 2;
    // A high surrogate at the end waits for its low half in the next chunk.
    const last = bytes.length - keep - 2;
    if (last >= 0) {
      const unit = this.bigEndian ? bytes.readUInt16BE(last) : bytes.readUInt16LE(last);
      if (unit >= 0xd800 && unit <= 0xdbff) keep += 2;
    }
    const body = this.carry.hold(bytes, keep);
    const text = this.bigEndian ? Buffer.from(body).swap16().toString('utf16le') : body.toString('utf16le');
    if (!text.isWellFormed()) {
      const at = 2 * firstLoneSurrogate(text);
      throw new DecodeError('INVALID_ENCODING', offset + at, 'an unpaired UTF-16 surrogate');
    }
    const nul = text.indexOf('\0');
    if (nul >= 0) throw new DecodeError('INVALID_ENCODING', offset + 2 * nul, 'a NUL character');
    const bom = text.indexOf('\uFEFF');
    if (bom >= 0) throw new DecodeError('UNEXPECTED_BOM', offset + 2 * bom, 'a byte-order mark inside the file');
    return text;
  }

  end(): string {
    const at = this.carry.leftover();
    if (at >= 0) throw new DecodeError('INVALID_ENCODING', at, 'the file ends inside a UTF-16 character');
    return '';
  }
}

function firstLoneSurrogate(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
      else return i;
    } else if (unit >= 0xdc00 && unit <= 0xdfff) return i;
  }
  return 0;
}

/** Single-byte code pages: stateless per chunk; a table marks the bytes refused. */
class SingleByteDecoder implements ChunkDecoder {
  private next: number;
  private readonly encoding: 'windows-1252' | 'iso-8859-1';
  private readonly refused: Uint8Array;

  constructor(start: number, encoding: 'windows-1252' | 'iso-8859-1', refused: Uint8Array) {
    this.next = start;
    this.encoding = encoding;
    this.refused = refused;
  }

  write(chunk: Buffer): string {
    const offset = this.next;
    this.next += chunk.length;
    const refused = this.refused;
    for (let i = 0; i < chunk.length; i++) {
      if (refused[chunk[i] ?? 0] === 1) throw this.refusal(chunk[i] ?? 0, offset + i);
    }
    return this.encoding === 'windows-1252' ? iconv.decode(chunk, 'windows-1252') : chunk.toString('latin1');
  }

  end(): string {
    return '';
  }

  private refusal(byte: number, at: number): DecodeError {
    if (byte === 0) return new DecodeError('INVALID_ENCODING', at, NUL_HINT);
    const why =
      this.encoding === 'windows-1252'
        ? `byte ${hex(byte)} is undefined in Windows-1252 (is the file UTF-8?)`
        : `byte ${hex(byte)} is a control code in ISO-8859-1 (is the file Windows-1252, where 0x80 is €?)`;
    return new DecodeError('INVALID_ENCODING', at, why);
  }
}

function refusedTable(bytes: readonly number[]): Uint8Array {
  const table = new Uint8Array(256);
  for (const byte of bytes) table[byte] = 1;
  return table;
}

const CP1252_REFUSED = refusedTable([0x00, 0x81, 0x8d, 0x8f, 0x90, 0x9d]);
const LATIN1_REFUSED = refusedTable([0x00, ...Array.from({ length: 0x20 }, (_, i) => 0x80 + i)]);

/** A decoder for `encoding` whose first byte is at file offset `start` (the BOM's length). */
export function createDecoder(encoding: Encoding, start: number): ChunkDecoder {
  switch (encoding) {
    case 'utf-8':
      return new Utf8Decoder(start);
    case 'utf-16le':
      return new Utf16Decoder(start, false);
    case 'utf-16be':
      return new Utf16Decoder(start, true);
    case 'windows-1252':
      return new SingleByteDecoder(start, encoding, CP1252_REFUSED);
    case 'iso-8859-1':
      return new SingleByteDecoder(start, encoding, LATIN1_REFUSED);
  }
}

/** Bytes per code unit: what a line break occupies when counting lines in raw bytes. */
export function unitWidth(encoding: Encoding): 1 | 2 {
  return encoding === 'utf-16le' || encoding === 'utf-16be' ? 2 : 1;
}
