/** What the reader yields and reports. */
import type { Entity } from '../../api/schemas/index.ts';
import type { Encoding } from '../../config/source-schema.ts';
import type { DetectedDelimiter } from './delimiter.ts';
import type { RowError } from './map-row.ts';

export type { RowError } from './map-row.ts';

/** A valid row, mapped and validated: ready to send. `line` is the 1-based line the row starts on. */
export interface RowAccepted<R> {
  readonly kind: 'row';
  readonly line: number;
  readonly record: R;
  /** The row's fields as parsed: written back to the rejects report if the API refuses the row. */
  readonly rawFields: readonly string[];
}

/** A refused row: never sent. One per row; `field`/`code`/`message` repeat the first of `errors`. */
export interface RowRejected {
  readonly kind: 'reject';
  readonly line: number;
  /** The row's fields as parsed (untrimmed, unconverted): what the rejects report writes back. */
  readonly rawFields: readonly string[];
  readonly field: string | null;
  readonly column?: string;
  readonly code: string;
  readonly message: string;
  readonly errors: readonly RowError[];
}

export type RowOutcome<R> = RowAccepted<R> | RowRejected;

/**
 * Valid rows the reader was told the caller will not look at (ReadInit.unread), left unsplit: one line each, every
 * line from `line` to `endLine`. Only the chunks of a reader opened with `unread` hold them (delta push's send pass).
 */
export interface RowsUnread {
  readonly kind: 'unread';
  readonly line: number;
  readonly endLine: number;
}

/** Known once the header is read, before the first row: enough to open the canonical CSV writer. */
export interface HeaderInfo {
  readonly file: string;
  readonly entity: Entity;
  /** The encoding the file is read in (a BOM overrides the configured one). */
  readonly encoding: Encoding;
  readonly bom: 'utf-8' | 'utf-16le' | 'utf-16be' | null;
  readonly delimiter: DetectedDelimiter;
  /** A workbook's sheet: a row's line is its row number there (null for CSV, where it is the file's line). */
  readonly sheet: string | null;
  /** A corrected rejects CSV (fix-records.ts): `headers` are the original file's, the agent's columns are not read. */
  readonly fixFile: boolean;
  /** Header cells, trimmed (several header rows: joined, header-rows.ts). */
  readonly headers: readonly string[];
  /** The line the header starts on (1 unless header_row says or it was found further down) and the line it ends on. */
  readonly headerLine: number;
  readonly headerEndLine: number;
  /** The API fields (canonical and custom) this file fills, from a column or a default: what a row of it can hold. */
  readonly fields: readonly string[];
  /** Products: custom columns rows may carry (the canonical CSV's extra header). Empty for other entities. */
  readonly customColumns: readonly string[];
  /** Columns whose values are not sent (other entities' extra columns, unnamed columns). */
  readonly ignoredColumns: readonly string[];
  /** The columns a row's mapping reads (HeaderPlan.used, by index): what makes a row what it is. */
  readonly usedColumns: readonly number[];
  /** One line each: BOM overriding the encoding, ignored columns, mapped columns absent from the header. */
  readonly warnings: readonly string[];
}

/** For a progress bar: percent by bytes. */
export interface ReadProgress {
  /** Bytes taken from the file so far (the BOM included); runs ahead of the rows by the parser's buffers. */
  readonly bytesRead: number;
  readonly totalBytes: number;
  readonly rows: number;
}

/**
 * Counts of one file. Once `complete`, `rows === accepted + rejected + skipped` always holds, and every line of the
 * file is the header, part of a row, or a blank line: `lines` is the file's line count.
 */
export interface ReadSummary extends HeaderInfo, ReadProgress {
  /** True once every row was yielded and the parser's own counts were reconciled with ours. */
  readonly complete: boolean;
  readonly accepted: number;
  readonly rejected: number;
  /**
   * Rows that are not data, counted as rows, neither sent nor rejected: those `skip_rows` says, the lines above the
   * header (header-rows.ts), and the lines after the table that carry no required field (a note, a disclaimer).
   */
  readonly skipped: number;
  /** Lines with nothing but whitespace or delimiters: not rows. */
  readonly blankLines: number;
  /** Lines consumed so far (header, rows, blank lines). */
  readonly lines: number;
}
