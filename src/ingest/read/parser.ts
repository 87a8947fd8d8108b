/**
 * csv-parse as the reader uses it, and what its records and errors mean for us.
 *
 * Nothing is lost silently (library notes: csv-parse's traps):
 * - no `columns` option: a row with more or fewer fields than the header reaches the reader whole and becomes
 *   a `field_count` reject instead of being truncated or dropped;
 * - record delimiters are given as a list (CRLF, LF, CR): auto-detection fixes the first ending it sees and
 *   folds the lines of a mixed file that end differently into fields;
 * - an unclosed quote ends in CSV_QUOTE_NOT_CLOSED, or in CSV_MAX_RECORD_SIZE once the swallowed record
 *   passes 4 MiB (which also bounds memory); both fail the file.
 * Decision: a quote inside an unquoted field is kept as a character (`12" Pizza`, `relax_quotes`), as
 * spreadsheets do. The price of relaxing is that a quote opened and never properly closed can run on over
 * lines without an error; `breaksIn` catches the shape that leaves.
 * Line numbers are the reader's own: csv-parse counts CRLF inside quoted fields twice.
 */
import { CsvError, parse } from 'csv-parse';
import type { Parser } from 'csv-parse';
import type { DetectedDelimiter } from './delimiter.ts';
import { FileFormatError } from './errors.ts';

/** Upper bound of one record; a larger one is an unclosed quote in practice. */
export const MAX_RECORD_BYTES = 4 * 1024 * 1024; // 4 MiB

/** A record as the parser emits it: its fields. */
export type Parsed = string[];

export function createParser(delimiter: DetectedDelimiter): Parser {
  return parse({
    delimiter,
    record_delimiter: ['\r\n', '\n', '\r'],
    quote: '"',
    escape: '"',
    relax_quotes: true,
    relax_column_count: true,
    skip_empty_lines: false, // blank lines are counted by the reader, not dropped unseen
    bom: false, // the decoder handled it
    // No `info`: it copies the parser's counters into an object per record; the reader counts lines itself.
    max_record_size: MAX_RECORD_BYTES,
  });
}

/**
 * Line breaks inside the fields of a record (CRLF is one); negative when a field holding a line break starts
 * with a literal quote. A quoted field's own quotes are removed by the parser, so such a value is what
 * `relax_quotes` leaves when it gives up on a quote that was never properly closed: lines were merged.
 * (A legitimate value starting with an escaped quote and holding a line break is refused too: rare, and
 * failing a file beats merging lines silently.)
 */
export function breaksIn(record: readonly string[]): number {
  let breaks = 0;
  for (const field of record) {
    if (!field.includes('\n') && !field.includes('\r')) continue;
    if (field.startsWith('"')) return -1;
    breaks += field.match(/\r\n|\r|\n/g)?.length ?? 0;
  }
  return breaks;
}

/**
 * Whether a record whose quoted field holds line breaks reads just as well without its quotes: split at the
 * delimiter with every quote taken as a character, each of its lines is a row of the record's own width, and the
 * quote has the shape of a ditto mark or of a stray quote (below). That is
 * the shape of a ditto mark (`"` for "same as above") or a stray quote a later one closed: the quoted reading merges
 * those rows into one that fits the header, so nothing else notices. A real multi-line value (an address, a
 * description) leaves lines of other widths. Quotes elsewhere in the record are not seen here: such a line's count
 * is off, and the record passes as the parser read it.
 */
export function readsAsRowsWithoutQuotes(record: readonly string[], delimiter: string): boolean {
  // The shape, besides the widths: a quote that opens right before a delimiter or closes right after one (`";` and
  // `;"`: ditto marks), or that runs over a whole line (a stray quote closed lines later). A real value over two
  // lines whose commas happen to fit the widths (`"Hauptstr. 1, Berlin` / `Haus B, 2. OG"`) has neither.
  const shaped = record.some((field) => {
    const segments = field.split(/\r\n|\r|\n/);
    return segments.length > 1 && (field.startsWith(delimiter) || field.endsWith(delimiter) || segments.length > 2);
  });
  if (!shaped) return false;
  const lines = [0]; // delimiters on each of the record's lines
  record.forEach((field, i) => {
    if (i > 0) lines[lines.length - 1]! += 1;
    field.split(/\r\n|\r|\n/).forEach((segment, j) => {
      if (j > 0) lines.push(0);
      lines[lines.length - 1]! += segment.split(delimiter).length - 1;
    });
  });
  return lines.length > 1 && lines.every((delimiters) => delimiters + 1 === record.length);
}

/** Nothing but whitespace and delimiters: a blank line (Excel writes `;;;` for empty rows). */
export function isBlank(record: readonly string[]): boolean {
  for (const field of record) if (field.trim() !== '') return false;
  return true;
}

/** A parser error as the file failure it causes; `line` is where the record being parsed starts. */
export function parseFailure(error: unknown, file: string, line: number): unknown {
  if (error instanceof FileFormatError || !(error instanceof CsvError)) return error;
  if (error.code === 'CSV_QUOTE_NOT_CLOSED') {
    const message = `a quoted field on line ${line} is never closed (the file ended inside it)`;
    return new FileFormatError('UNCLOSED_QUOTE', message, { file, line });
  }
  if (error.code === 'CSV_MAX_RECORD_SIZE') {
    const message = `the row starting on line ${line} exceeds ${MAX_RECORD_BYTES} bytes: most likely an unclosed quote`;
    return new FileFormatError('RECORD_TOO_LARGE', message, { file, line });
  }
  return new FileFormatError('MALFORMED_CSV', error.message, { file, line }, { cause: error });
}
