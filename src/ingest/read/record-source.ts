/**
 * Where the reader's records come from: the seam between a file format and the mapping. A RecordSource turns a file
 * into records (its cells as strings, in file order) and says on which line each starts; the row reader
 * (reader.ts) maps them to API records, whatever the format. CSV is csv-records.ts, a workbook (.xlsx) is
 * xlsx-records.ts; open-records.ts chooses one for a file.
 *
 * Contract: every record of the file is handed out exactly once, the header first; a problem that fails the file
 * is thrown as a FileFormatError (never a silent stop); `finish()` after the last record checks the source's own
 * counts, so a record lost on the way fails the file instead of vanishing.
 */
import type { Encoding } from '../../config/source-schema.ts';

/** A cell the row cannot be sent with (a spreadsheet's error value, a formula without a result), by 0-based column. */
export interface CellProblem {
  readonly column: number;
  /** "cell F7 holds the error #N/A" */
  readonly message: string;
}

/**
 * The cells of a record handed out unsplit (RecordSource.skipUnread): lines the reader was told it will not look at,
 * one line each, from the record's `line` to its `endLine`. Compared by identity; never a record's real cells.
 */
export const UNREAD_FIELDS: string[] = Object.freeze([]) as unknown as string[];

export interface SourceRecord {
  /** The record's cells as the file holds them (untrimmed), or UNREAD_FIELDS (skipUnread). */
  readonly fields: string[];
  /** 1-based line the record starts on (a spreadsheet: its row number). */
  readonly line: number;
  /** The line it ends on: more than `line` when a cell holds line breaks. */
  readonly endLine: number;
  /** Cells without a usable value (a spreadsheet's); the reader rejects the row when it uses one. */
  readonly problems?: readonly CellProblem[];
  /** A corrected rejects CSV's row: its line in the file it fixes, which `{line}` templates read (fix-records.ts). */
  readonly templateLine?: number;
}

/** How the file was read, for the report (a spreadsheet has no delimiter or encoding of its own: it says so). */
export interface SourceFormat {
  readonly encoding: Encoding;
  readonly bom: 'utf-8' | 'utf-16le' | 'utf-16be' | null;
  /** The delimiter the rejects CSV is written with (the file's own, for CSV). */
  readonly delimiter: ',' | ';' | '\t' | '|';
  /** Format-level notes (a BOM overriding the configured encoding). */
  readonly warnings: readonly string[];
  /** A workbook's sheet whose row numbers the records' lines are; null for CSV. */
  readonly sheet: string | null;
}

/** What a record source is told of the planned header (RecordSource.planned). */
export interface HeaderLayout {
  readonly width: number;
  readonly numberSeparators: ReadonlyMap<number, '.' | ','>;
}

export interface RecordSource {
  readonly format: SourceFormat;
  /** A record already read, without waiting; undefined when none is ready (then `next()` waits). */
  take(): SourceRecord | undefined;
  /** The next record, or undefined at the end of the file; throws a FileFormatError for a broken file. */
  next(): Promise<SourceRecord | undefined>;
  /**
   * The header's width is known: a record of another width that spans several lines is a quote left open (CSV),
   * which fails the file rather than becoming one row. Sources without that failure mode ignore it.
   */
  checkWidth(record: SourceRecord, width: number): void;
  /**
   * Optional: lines whose cells the reader will not read (ReadInit.unmapped, with nothing carried down from them):
   * the source may hand such records out with UNREAD_FIELDS instead of splitting them, consecutive ones of one line
   * each as one record (line to endLine). Applies to records split from then on. A source without it hands out every
   * record's cells.
   */
  skipUnread?(unread: (line: number) => boolean): void;
  /**
   * Optional: the header is planned, records from the next one on are read for it: a workbook pads its rows to the
   * header's `width` (a letterhead row above a header found further down is narrower), and writes number cells in
   * the columns of `numberSeparators` (0-based) with that decimal separator, where a field's `number_format` differs
   * from the source's (xlsx-cells.ts). Sources of text ignore it.
   */
  planned?(plan: HeaderLayout): void;
  /** After the last record: the source's own record and byte counts must match what was handed out. */
  finish(): void;
  /** Bytes of the file read so far and its size, for a progress bar. */
  bytes(): { readonly bytesRead: number; readonly totalBytes: number };
  /** Stops reading and closes the file; safe more than once. */
  close(): void;
}
