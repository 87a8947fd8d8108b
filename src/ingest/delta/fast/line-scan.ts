/**
 * Delta push's first pass in line mode (compare.ts), over bytes: a half of a large file (two-halves.ts) whose lines are
 * mostly unchanged exports of the day before. The reader would decode every line, split it into a string per cell and
 * hand out an outcome per row, to have its key converted and its cells hashed; here a line is looked at as bytes, and
 * only its key's cells become strings.
 *
 * Exact by construction, or not used: each line gets the entry the reader's outcome would give (collectRows).
 * - The bytes are those the reader takes: the same UTF-8 decoder validates every piece (an invalid byte, a NUL, a
 *   byte-order mark inside the file), and any failure hands the half to the reader, which fails it as it always did.
 * - A line is what the CSV fast lane makes a record (csv-fast-lane.ts): the bytes up to an LF. A piece holding a quote
 *   or a CR, where csv-parse or another line break could make records otherwise, hands the half to the reader, as does
 *   a line longer than MAX_LINE_BYTES (csv-parse's record limit is the reader's to apply).
 * - Cells are split on the delimiter (one ASCII byte; UTF-8 never uses an ASCII byte inside a character). A line with
 *   another number of cells than the header is no row (a reject), nor is a blank one (isBlank, checked only when the
 *   key's cells are blank), as outcome() decides (reader.ts).
 * - The key is converted by the reader's own conversion (RowReader.conversion: cleaning, defaults, maps, skip
 *   rules), from the same cells as text; a row that does not convert or is skipped is no row. Where that conversion
 *   takes the key's cells as they are (RowConversion.verbatim: string fields from one column each, no maps, no
 *   fill_down or skip rule) and the cleaner would keep each cell (CellCleaner.keeps: ASCII, nothing to trim, no
 *   apostrophe, no null marker), the key is hashed from the cells' bytes (hashKeyBytes): the conversion would return
 *   those very cells. Any other line's key is converted as text.
 * - The line hash of an ASCII line is hashed from its bytes (lineHashOfBytes, equal to lineHashOf of its cells as text);
 *   a line with other characters has the cells it hashes decoded first.
 */
import { openInboxFile } from '../../inbox-file.ts';
import { MAX_RECORD_BYTES, isBlank } from '../../read/parser.ts';
import { createDecoder } from '../../read/decoders.ts';
import type { ByteRange } from '../../read/open-source.ts';
import type { RowConversion, RowReader } from '../../read/index.ts';
import { BUSINESS_KEY_FIELDS, KEY_PARTS_AS_IS, type Entity } from '../../../api/schemas/index.ts';
import { collectRows, hashKey, hashKeyBytes, type RowHashing } from './row-hash.ts';
import { Hash64Stream } from './hash.ts';
import { lineHashOf, lineHashOfBytes, type LineSeed } from './line-hash.ts';
import { offsetHi, type SortedRuns } from './sorted-runs.ts';

type Row = Readonly<Record<string, unknown>>;

/** The pieces the half is read in. */
const PIECE_BYTES = 1024 * 1024;
/** Longer lines are left to the reader (which applies csv-parse's record limit, in characters). */
const MAX_LINE_BYTES = MAX_RECORD_BYTES / 4;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;

export interface LineScan {
  readonly file: string;
  /** The half's lines, without the header line: bytes [start, end), from line 2 on, as the reader numbers them. */
  readonly body: ByteRange;
  /** A `keysOnly` reader of the half, its header read and its rows not iterated (its conversion is used). */
  readonly reader: RowReader<Row>;
  readonly entity: Entity;
  readonly seed: LineSeed;
}

/** Why the half is left to the reader. */
class NotBytes extends Error {}

/**
 * Every row of the half into `runs`, as collectRows would put the reader's outcomes in line mode; resolves to the
 * number of the half's last line (the reader's summary().lines), or null when the half is the reader's to read
 * (see above): `runs` then holds some of its rows, and is to be discarded.
 */
export async function scanLines(scan: LineScan, runs: SortedRuns): Promise<number | null> {
  const conversion = scan.reader.conversion();
  const header = scan.reader.header;
  const delimiter = header.delimiter.charCodeAt(0);
  if (conversion === null || header.encoding !== 'utf-8' || header.delimiter.length !== 1 || delimiter >= 0x80 || delimiter === QUOTE || delimiter === CR || delimiter === LF) return null;
  const width = header.headers.length;
  const starts = new Int32Array(width);
  const ends = new Int32Array(width);
  /** The cells as text: those the conversion reads, and, for a line that is not ASCII, those its hash reads. */
  const fields: string[] = new Array<string>(width).fill('');
  const key = new Hash64Stream();
  const { seed, entity } = scan;
  const keyCells = conversion.cells;
  const keyColumns = verbatimKey(conversion, entity);
  const keeps = conversion.verbatim?.keeps;
  const noteCells = conversion.noteCells;
  /** A key hashed from its bytes has every cell non-empty: when one is a required field's, the row is data. */
  const bytesKeyIsData = keyColumns !== null && keyColumns.some((c) => noteCells.includes(c));
  /** Hashes the line's key from its cells' bytes, when they are converted as they are (see above); false: it is not. */
  const keyFromBytes = (bytes: Buffer): boolean => {
    if (keyColumns === null || keeps === undefined) return false;
    for (let i = 0; i < keyColumns.length; i++) {
      const c = keyColumns[i] as number;
      if (!keeps(bytes, starts[c] as number, ends[c] as number)) return false;
    }
    hashKeyBytes(key, bytes, starts, ends, keyColumns);
    return true;
  };

  /**
   * The entry of line `line`, bytes [start, stop) of `bytes`, at byte `offset` of the file; a promise to await when the
   * runs spill.
   */
  const lineEntry = (bytes: Buffer, start: number, stop: number, line: number, offset: number): Promise<void> | null => {
    let cell = 0;
    let ascii = true;
    starts[0] = start;
    for (let i = start; i < stop; i++) {
      const b = bytes[i] as number;
      if (b === delimiter) {
        ends[cell] = i;
        cell += 1;
        if (cell === width) return null; // more cells than the header: a reject
        starts[cell] = i + 1;
      } else if (b >= 0x80) ascii = false;
    }
    if (cell !== width - 1) return null; // fewer cells: a reject, or a blank line
    ends[cell] = stop;
    // A key of cells kept as they are is neither blank nor a reject.
    const keyed = keyFromBytes(bytes);
    if (!keyed || !bytesKeyIsData) {
      const encoding = ascii ? 'latin1' : 'utf8';
      let blankKey = true;
      for (const c of keyCells) {
        const value = bytes.toString(encoding, starts[c], ends[c]);
        fields[c] = value;
        if (blankKey && value.trim() !== '') blankKey = false;
      }
      if (!keyed && blankKey && isBlank(Array.from({ length: width }, (_, c) => bytes.toString(encoding, starts[c], ends[c])))) return null;
      for (const c of noteCells) fields[c] = bytes.toString(encoding, starts[c], ends[c]);
      // The reader holds such a row until it knows whether data follows (reader.ts, notData): its fate is not the line's.
      if (conversion.mayBeNote(fields)) throw new NotBytes('a row that may be a note under the table');
    }
    if (!keyed) {
      const mapped = conversion.convert(fields, line);
      if (mapped === null || mapped.kind !== 'ok') return null; // a reject, or a skipped row
      hashKey(key, entity, mapped.record);
    }
    let lineHash: number;
    if (ascii) lineHash = lineHashOfBytes(bytes, starts, ends, seed);
    else {
      for (const c of seed.cells) fields[c] = bytes.toString('utf8', starts[c], ends[c]);
      lineHash = lineHashOf(fields, seed);
    }
    return runs.add(key.hi, key.lo, offsetHi(offset), offset >>> 0, line, lineHash);
  };

  const handle = await openInboxFile(scan.file);
  try {
    const decoder = createDecoder('utf-8', scan.body.start);
    let line = 1;
    /** The unfinished last line of the pieces so far, and where it starts in the file. */
    let rest: Buffer | null = null;
    let restAt = 0;
    /** Where the decoder's output starts in the file (it holds back a character cut at a piece's end). */
    let validAt = scan.body.start;
    const piece = Buffer.allocUnsafe(PIECE_BYTES);
    for (let at = scan.body.start; at < scan.body.end; ) {
      const { bytesRead } = await handle.read(piece, 0, Math.min(PIECE_BYTES, scan.body.end - at), at);
      if (bytesRead === 0) throw new NotBytes('the file ended early: it changed while it was read');
      at += bytesRead;
      const valid = decoder.write(piece.subarray(0, bytesRead)) as Buffer;
      const base = validAt;
      validAt += valid.length;
      if (valid.indexOf(QUOTE) >= 0 || valid.indexOf(CR) >= 0) throw new NotBytes('a quote or a CR');
      // The unfinished line is joined with this piece's first line alone (a copy of one line, not of the piece).
      let start = 0;
      if (rest !== null) {
        const lf = valid.indexOf(LF);
        if (lf < 0) {
          rest = Buffer.concat([rest, valid]);
          if (rest.length > MAX_LINE_BYTES) throw new NotBytes('a long line');
          continue;
        }
        const joined = Buffer.concat([rest, valid.subarray(0, lf)]);
        rest = null;
        line += 1;
        if (joined.length > MAX_LINE_BYTES) throw new NotBytes('a long line');
        const spilling = lineEntry(joined, 0, joined.length, line, restAt);
        if (spilling !== null) await spilling;
        start = lf + 1;
      }
      for (;;) {
        const stop = valid.indexOf(LF, start);
        if (stop < 0) break;
        line += 1;
        if (stop - start > MAX_LINE_BYTES) throw new NotBytes('a long line');
        const spilling = lineEntry(valid, start, stop, line, base + start);
        if (spilling !== null) await spilling;
        start = stop + 1;
      }
      // Copied: the piece's buffer is read into again.
      if (start < valid.length) {
        rest = Buffer.from(valid.subarray(start));
        restAt = base + start;
      }
    }
    decoder.end();
    if (rest !== null) {
      if (rest.length > MAX_LINE_BYTES) throw new NotBytes('a long line');
      line += 1;
      const spilling = lineEntry(rest, 0, rest.length, line, restAt);
      if (spilling !== null) await spilling;
    }
    return line;
  } catch {
    // Whatever it was (a quote, a decoding error, a read that failed), the reader reads the half and decides.
    return null;
  } finally {
    await handle.close();
  }
}

/** The columns of the key's parts, in key order, when the conversion takes each as it is (RowConversion.verbatim); or null. */
function verbatimKey(conversion: RowConversion<Row>, entity: Entity): number[] | null {
  const columns = conversion.verbatim?.columns;
  if (columns === undefined || !KEY_PARTS_AS_IS[entity]) return null;
  const keyColumns: number[] = [];
  for (const field of BUSINESS_KEY_FIELDS[entity]) {
    const column = columns.get(field);
    if (column === undefined) return null;
    keyColumns.push(column);
  }
  return keyColumns;
}

/** A half of a file as its first pass reads it (two-halves.ts, half-worker.ts). */
export interface HalfRead {
  readonly file: string;
  /** The half's lines, without the header line. */
  readonly body: ByteRange;
  /** The half's reader (ReadInit.byteRanges; `keysOnly` in line mode), its rows not iterated. */
  readonly reader: RowReader<Row>;
  readonly hashing: RowHashing;
  /** New runs, for when a scan gave way (the runs it filled are removed). */
  readonly fresh: () => SortedRuns;
}

/**
 * Every valid row of a half into runs: scanned as bytes in line mode where that is exact (scanLines), else from its
 * reader's outcomes (collectRows). Resolves to the runs that hold them and the half's last line.
 */
export async function collectHalf(half: HalfRead, runs: SortedRuns): Promise<{ runs: SortedRuns; lines: number }> {
  const { reader, hashing } = half;
  let into = runs;
  if (hashing.lineSeed != null) {
    const lines = await scanLines({ file: half.file, body: half.body, reader, entity: hashing.entity, seed: hashing.lineSeed }, into);
    if (lines !== null) return { runs: into, lines };
    await into.remove();
    into = half.fresh();
  }
  await collectRows(hashing, reader.chunks(), into);
  const summary = reader.summary();
  if (!summary.complete) throw new Error('the half was not read to its end');
  return { runs: into, lines: summary.lines };
}
