/**
 * Errors of reading a source file. A `FileFormatError` fails the whole file (it goes to `failed/`, the error in its
 * `.report.json`); a row problem is never an error but a reject outcome. I/O errors (ENOENT, EACCES) are not
 * wrapped: a file that vanished or cannot be opened is not a broken file, and the caller decides what to do.
 * Callers branch on `code`, never on the message.
 */

export const FILE_FORMAT_CODES = [
  /** Bytes that are not valid in the declared (or BOM-detected) encoding, a NUL byte, or a truncated sequence. */
  'INVALID_ENCODING',
  /** A byte-order mark after the start of the file: usually two files concatenated. */
  'UNEXPECTED_BOM',
  /** A quote opened and never closed, or closed so late that a multi-line record has the wrong field count. */
  'UNCLOSED_QUOTE',
  /** A record larger than the reader's limit (an unclosed quote swallowing the file, in practice). */
  'RECORD_TOO_LARGE',
  /** The file has nothing but whitespace (or is 0 bytes, or only a BOM). */
  'EMPTY_FILE',
  /** The header found (line 1, or header_row, or the line header-rows.ts found) has no column names. */
  'NO_HEADER',
  /** `header_row` names a line on which no row starts (blank, inside a quoted cell, past the end). */
  'HEADER_NOT_FOUND',
  /** Two header cells with the same (trimmed) name. */
  'DUPLICATE_HEADER',
  /** The header holds none of the entity's fields (after `columns:` mapping). */
  'NO_KNOWN_COLUMNS',
  /** A required field has neither a column nor a default: every row would be rejected. */
  'MISSING_COLUMNS',
  /** `delimiter: auto` found no candidate, or a tie, in the header line. */
  'DELIMITER_NOT_DETECTED',
  /** Any other CSV syntax error of the parser. */
  'MALFORMED_CSV',
  /** The parser's record or byte count disagrees with what was yielded: a bug, never a silent loss. */
  'RECONCILE_FAILED',
  /** A `format: csv` source's file is a workbook (a zip or an OLE2 file), not text. */
  'NOT_CSV',
  /** A `format: xlsx` source's file is not a workbook (a CSV named .xlsx, any other file). */
  'NOT_A_WORKBOOK',
  /** The workbook is protected with a password: its content is encrypted. */
  'WORKBOOK_ENCRYPTED',
  /** An Excel 97-2003 workbook (.xls): save it as .xlsx. */
  'WORKBOOK_LEGACY_XLS',
  /** The workbook's archive or XML is damaged or cut off, or its reading stopped making progress. */
  'WORKBOOK_CORRUPT',
  /** The workbook unpacks, compresses or holds more than its source's `workbook_limits` allow (a zip bomb). */
  'WORKBOOK_TOO_LARGE',
  /**
   * The sheet holds cells the streaming reader would misread: dates as ISO text (`t="d"`, Strict Open XML) or inline
   * text in several formatted runs. Saving it again from Excel as "Excel Workbook" writes both plainly.
   */
  'WORKBOOK_UNSUPPORTED',
  /** The sheet named (or numbered) by `sheet:` is not in the workbook. */
  'SHEET_NOT_FOUND',
  /** The file's name does not match the source's `file_name` pattern (its values cannot be known). */
  'FILE_NAME_MISMATCH',
] as const;
export type FileFormatCode = (typeof FILE_FORMAT_CODES)[number];

export interface FileFormatErrorInit {
  readonly file: string;
  /** 1-based line the problem is on (for a record, the line it starts on). */
  readonly line?: number;
  /** 0-based byte offset in the file (decoding problems only). */
  readonly byteOffset?: number;
}

export class FileFormatError extends Error {
  readonly code: FileFormatCode;
  readonly file: string;
  readonly line: number | undefined;
  readonly byteOffset: number | undefined;

  constructor(code: FileFormatCode, message: string, init: FileFormatErrorInit, options?: ErrorOptions) {
    super(message, options);
    this.name = 'FileFormatError';
    this.code = code;
    this.file = init.file;
    this.line = init.line;
    this.byteOffset = init.byteOffset;
  }

  /** The error as JSON (in a log line, say): its code, its message and where in the file it was found. */
  toJSON(): { code: FileFormatCode; message: string; line?: number; byte_offset?: number } {
    return {
      code: this.code,
      message: this.message,
      ...(this.line === undefined ? {} : { line: this.line }),
      ...(this.byteOffset === undefined ? {} : { byte_offset: this.byteOffset }),
    };
  }
}

/**
 * A decoding problem found by a chunk decoder, at an absolute byte offset. The reader turns it into a
 * FileFormatError once it has counted the lines before that offset.
 */
export class DecodeError extends Error {
  readonly code: 'INVALID_ENCODING' | 'UNEXPECTED_BOM';
  readonly byteOffset: number;

  constructor(code: 'INVALID_ENCODING' | 'UNEXPECTED_BOM', byteOffset: number, message: string) {
    super(message);
    this.name = 'DecodeError';
    this.code = code;
    this.byteOffset = byteOffset;
  }
}

/** A source whose `defaults` (or formats) cannot work; found by `compileSource` before any file is read. */
export class SourceConfigError extends Error {
  readonly code = 'SOURCE_CONFIG_INVALID';
  /** Dotted path inside the source, e.g. `defaults.tax_rate`. */
  readonly path: string;

  constructor(path: string, message: string) {
    super(`${path}: ${message}`);
    this.name = 'SourceConfigError';
    this.path = path;
  }
}
