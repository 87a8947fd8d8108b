/**
 * A workbook (.xlsx, .xlsm) as records: one sheet's rows, each as the cells' text (xlsx-cells.ts) with its row
 * number as the line, read row by row, so memory does not grow with the number of rows (it holds the workbook's
 * shared strings table; library-notes.md, exceljs).
 *
 *   bytes -> checkWorkbookFile (magic bytes, complete zip) -> the archive's central directory (unzipper.Open)
 *         -> exceljs's parsers, fed the parts in the order a sheet needs them: relationships, workbook (the sheets'
 *            names), shared strings, styles (which cells are dates), then the chosen sheet, streamed
 *         -> records: the first row with a value is the header, each later row a record; empty rows are skipped
 *            (as blank lines are), so a record's line is its row number in the sheet.
 *
 * Why not exceljs's own streaming WorkbookReader: it reads the archive in one streaming pass and parks a sheet that
 * comes before the shared strings (as Excel and exceljs write them) in a temp file; meanwhile that pass can end
 * early and drop the rest of the archive (exceljs#3064: measured here, one read in four of a small .xlsm failed, and
 * a sheet cut short there would lose rows). Through the central directory every part is read whole, in order, and
 * nothing goes to the temp directory. These are exceljs's internal parse methods (the ones its upstream fix uses):
 * package.json pins exceljs to 4.4.0, and the tests here fail if they change.
 *
 * The sheet: `sheet:` by name, or by position in the workbook's tab order (1 = the first), default the first; only
 * it is read, the others are named in a warning. A row is as wide as the header (every cell of the header row the
 * sheet holds, empty ones a merge covers included): shorter rows are padded with empty cells, trailing empty cells
 * are dropped; a value beyond the header's last column keeps the row longer, and the
 * reader rejects it for its field count as it would a CSV row.
 *
 * What survives a broken file: a problem that fails the file is a FileFormatError (never a silent stop); a read that
 * stops producing rows fails after `stallMs` of nothing; a workbook that unpacks, compresses or holds more than the
 * source's `workbook_limits` fails with WORKBOOK_TOO_LARGE as the bound is crossed (xlsx-limits.ts). At the end the rows the sheet gave and the records handed
 * out must agree.
 */
import { stat } from 'node:fs/promises';
import { Transform, type Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import { Open } from 'unzipper';
import { systemClock, type Clock } from '../../clock.ts';
import { WORKBOOK_LIMIT_DEFAULTS, type WorkbookLimits } from '../../config/workbook-limits-schema.ts';
import { FileFormatError } from './errors.ts';
import type { CellProblem, HeaderLayout, RecordSource, SourceRecord } from './record-source.ts';
import { cellText } from './xlsx-cells.ts';
import { checkWorkbookFile } from './xlsx-check.ts';
import { WorkbookBudget } from './xlsx-limits.ts';

export interface WorkbookRecord extends SourceRecord {
  /** The row number in the sheet. */
  readonly line: number;
  /** Cells of the record that have no usable value; empty for most rows. */
  readonly problems: readonly CellProblem[];
}

export interface WorkbookFormat {
  readonly encoding: 'utf-8';
  readonly bom: null;
  /**
   * The rejects CSV of a workbook is comma-separated, or semicolon-separated where numbers have a decimal comma (as
   * Excel itself writes CSV in such a locale, and opens it).
   */
  readonly delimiter: ',' | ';';
  readonly warnings: readonly string[];
  /** The sheet read: a record's line is its row number there. */
  readonly sheet: string | null;
}

export interface XlsxOptions {
  /** Sheet name, or 1-based position in the tab order; default the first. */
  readonly sheet?: string | number | undefined;
  /** The decimal separator number cells are written with (default "."): the source's, so text and numbers read alike. */
  readonly decimalSeparator?: '.' | ',';
  /** Fail the file after this long without a row or the end (default 60 s). */
  readonly stallMs?: number;
  readonly clock?: Clock;
  /** Bounds on what the workbook may unpack and hold (default WORKBOOK_LIMIT_DEFAULTS). */
  readonly limits?: WorkbookLimits | undefined;
  /** The archive's parts (default: from the file's central directory); tests give a part that stops. */
  readonly parts?: ReadonlyMap<string, ZipPart>;
}

/** A part of the archive: a file in the zip. */
export interface ZipPart {
  readonly path: string;
  readonly uncompressedSize: number;
  /** As the archive's directory says; without it (a test's part) the compression ratio is not checked. */
  readonly compressedSize?: number;
  stream(): Readable;
}

/** Long enough for a slow disk or a share, short enough that a hung read does not hold the source for long. */
export const XLSX_STALL_MS = 60 * 1000; // 60 s


/** Column letters of a 0-based index: 0 -> A, 26 -> AA. */
export function columnLetters(index: number): string {
  let n = index + 1;
  let out = '';
  while (n > 0) {
    const rem = (n - 1) % 26;
    out = String.fromCharCode(65 + rem) + out;
    n = Math.floor((n - 1) / 26);
  }
  return out;
}

/** exceljs 4.4.0's WorkbookReader internals used here (see the header). */
interface ExcelJsParts {
  _parseRels(entry: Readable): Promise<void>;
  _parseWorkbook(entry: Readable): Promise<void>;
  /** With `sharedStrings: 'emit'`: each string of the table, in order (a rich text as an object). */
  _parseSharedStrings(entry: Readable): AsyncGenerator<{ index: number; text: unknown }>;
  _parseStyles(entry: Readable): Promise<void>;
  _parseWorksheet(iterator: AsyncIterable<unknown>, sheetNo: string): Generator<{ eventType: string; value: unknown }>;
  model?: { sheets?: ReadonlyArray<{ name: string; rId: string }> };
  /** The workbook's `workbookPr` as exceljs parsed it: `model.date1904` when its dates count from 1904 (old Mac workbooks). */
  properties?: { model?: { date1904?: boolean } };
  workbookRels?: ReadonlyArray<{ Id: string; Target: string }>;
  /** The table the worksheet reader looks shared strings up in. */
  sharedStrings?: unknown[];
}

/** The parts of the archive, by path (`xl/workbook.xml`). */
type Parts = ReadonlyMap<string, ZipPart>;

export class XlsxRecords implements RecordSource {
  readonly #file: string;
  readonly #options: XlsxOptions;
  readonly #clock: Clock;
  readonly #totalBytes: number;
  readonly #queue: WorkbookRecord[] = [];
  readonly #streams: Readable[] = [];
  readonly #budget: WorkbookBudget;
  #warnings: string[] = [];
  #rows: AsyncIterator<ExcelJS.Row> | null = null;
  #sheetBytes = 0;
  #sheetBytesRead = 0;
  #width: number | null = null;
  /** The header is planned (RecordSource.planned): rows are padded to its width. */
  #planned = false;
  #rowsGiven = 0;
  #recordsMade = 0;
  #recordsTaken = 0;
  #ended = false;
  #sheetName: string | null = null;
  /** The workbook counts dates from 1904 (workbookPr date1904): formula results with a date format need it. */
  #date1904 = false;
  /** Columns whose number cells take another decimal separator than the source's (numberColumns). */
  #separators: ReadonlyMap<number, '.' | ','> = new Map();

  constructor(file: string, totalBytes: number, options: XlsxOptions) {
    this.#file = file;
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#totalBytes = totalBytes;
    this.#budget = new WorkbookBudget(file, options.limits ?? WORKBOOK_LIMIT_DEFAULTS);
  }

  get format(): WorkbookFormat {
    return { encoding: 'utf-8', bom: null, delimiter: this.#options.decimalSeparator === ',' ? ';' : ',', warnings: [...this.#warnings], sheet: this.#sheetName };
  }

  /** The sheet being read. */
  get sheet(): string | null {
    return this.#sheetName;
  }

  /** Reads the workbook's parts up to the chosen sheet; its rows come with `next()`. */
  async open(parts: Parts): Promise<void> {
    const reader = new ExcelJS.stream.xlsx.WorkbookReader(this.#file, {
      entries: 'emit',
      // 'emit', and the table is built below: every string is counted against the limit before it is kept.
      sharedStrings: 'emit',
      styles: 'cache', // dates: without the styles a date cell is only its serial number
      hyperlinks: 'ignore',
      worksheets: 'emit',
    }) as unknown as ExcelJsParts;
    const part = (path: string) => {
      const found = parts.get(path);
      return found === undefined ? null : this.#guarded(found);
    };
    if (parts.has('xl/workbook.bin')) {
      throw new FileFormatError('NOT_A_WORKBOOK', 'the file is an Excel binary workbook (.xlsb), not .xlsx: save it as "Excel Workbook (*.xlsx)" and drop it again', { file: this.#file });
    }
    const rels = part('xl/_rels/workbook.xml.rels');
    const workbook = part('xl/workbook.xml');
    if (rels === null || workbook === null) {
      throw new FileFormatError('NOT_A_WORKBOOK', 'the file is a zip archive but not an Excel workbook (it has no xl/workbook.xml)', { file: this.#file });
    }
    await reader._parseRels(rels);
    await reader._parseWorkbook(workbook);
    this.#date1904 = reader.properties?.model?.date1904 === true;
    const strings = part('xl/sharedStrings.xml');
    if (strings !== null) {
      const table: unknown[] = [];
      for await (const { text } of reader._parseSharedStrings(strings)) {
        this.#budget.sharedString();
        table.push(text);
      }
      reader.sharedStrings = table;
    }
    const styles = part('xl/styles.xml');
    if (styles !== null) await reader._parseStyles(styles);
    const { path, sheetNo } = this.#choose(reader);
    const sheet = parts.get(path);
    if (sheet === undefined) throw new FileFormatError('WORKBOOK_CORRUPT', `the workbook names a sheet at ${path} that its archive does not hold`, { file: this.#file });
    this.#sheetBytes = sheet.uncompressedSize;
    let tail = '';
    const counted = this.#guarded(sheet).pipe(
      new Transform({
        transform: (chunk: Buffer, _encoding, done) => {
          this.#sheetBytesRead += chunk.length;
          // The markup is ASCII: latin1 keeps every byte as one character, and a tail carries a match across chunks.
          const text = tail + chunk.toString('latin1');
          tail = text.slice(-MISREAD_CELLS_CARRY);
          const misread = misreadCells(text);
          done(misread === null ? null : new FileFormatError('WORKBOOK_UNSUPPORTED', misread, { file: this.#file }), chunk);
        },
      }),
    );
    this.#streams.push(counted);
    for (const { eventType, value } of reader._parseWorksheet(counted, sheetNo)) {
      if (eventType === 'worksheet') this.#rows = (value as AsyncIterable<ExcelJS.Row>)[Symbol.asyncIterator]();
    }
    if (this.#rows === null) throw new Error('exceljs did not make a worksheet reader: has its version changed from 4.4.0?');
  }

  /** A part's inflated bytes, counted against the workbook's limits; closed with the reader. */
  #guarded(part: ZipPart): Readable {
    return this.#track(this.#budget.guard(part, this.#track(part.stream())));
  }

  /** Closed with the reader; an error of a part's stream fails the read where it is consumed. */
  #track(stream: Readable): Readable {
    this.#streams.push(stream);
    return stream;
  }

  /** The sheet to read (by name or tab position) and its part; fails when the configured one is not there. */
  #choose(reader: ExcelJsParts): { path: string; sheetNo: string } {
    const sheets = reader.model?.sheets ?? [];
    const names = sheets.map((s) => s.name);
    const wanted = this.#options.sheet;
    let sheet: { name: string; rId: string } | undefined;
    if (wanted === undefined) sheet = sheets[0];
    else if (typeof wanted === 'number') sheet = sheets[wanted - 1];
    else sheet = sheets.find((s) => s.name === wanted) ?? sheets.find((s) => s.name.trim().toLowerCase() === wanted.trim().toLowerCase());
    if (sheet === undefined) {
      if (wanted === undefined) throw new FileFormatError('EMPTY_FILE', 'the workbook has no sheet', { file: this.#file });
      const which = typeof wanted === 'number' ? `no sheet ${wanted} (it has ${sheets.length})` : `no sheet named "${wanted}"`;
      const list = names.map((n) => `"${n}"`).join(', ');
      throw new FileFormatError('SHEET_NOT_FOUND', `the workbook has ${which}; its sheets: ${list || 'none'}. Set sheet: in the source's config`, { file: this.#file });
    }
    this.#sheetName = sheet.name;
    const others = names.filter((n) => n !== sheet.name);
    if (others.length > 0) {
      this.#warnings = [`the workbook has ${names.length} sheets: read "${sheet.name}", not ${others.map((n) => `"${n}"`).join(', ')} (sheet: in the source's config chooses another)`];
    }
    const target = reader.workbookRels?.find((r) => r.Id === sheet.rId)?.Target ?? '';
    const path = target.startsWith('/') ? target.slice(1) : `xl/${target}`;
    // exceljs names a worksheet by its part's number (xl/worksheets/sheet3.xml -> "3") to find it in the workbook.
    const sheetNo = /sheet(\d+)\.xml$/.exec(path)?.[1];
    if (sheetNo === undefined) throw new FileFormatError('WORKBOOK_CORRUPT', `the sheet "${sheet.name}" has no worksheet part (${target || 'none'})`, { file: this.#file });
    return { path, sheetNo };
  }

  /** The record of a sheet row: its cells' text, as wide as the header, with the cells that cannot be used. */
  #record(row: ExcelJS.Row): WorkbookRecord | null {
    const values = row.values as ExcelJS.CellValue[];
    const fields: string[] = [];
    const problems: CellProblem[] = [];
    for (let c = 1; c < values.length; c++) {
      const value = values[c];
      // A number's format matters (zero padding, a formula's date): looked up only for numbers and formulas.
      const format = typeof value === 'number' || (typeof value === 'object' && value !== null && ('formula' in value || 'sharedFormula' in value))
        ? { numFmt: row.getCell(c).numFmt, date1904: this.#date1904 }
        : undefined;
      const cell = cellText(value, this.#separators.get(c - 1) ?? this.#options.decimalSeparator, format);
      fields.push(cell.text);
      if (cell.problem !== undefined) problems.push({ column: c - 1, message: `cell ${columnLetters(c - 1)}${row.number} ${cell.problem}` });
    }
    while (fields.length > 0 && fields[fields.length - 1] === '' && !problems.some((p) => p.column === fields.length - 1)) fields.pop();
    if (fields.length === 0 && problems.length === 0) return null; // a row with formatting but no value: a blank line
    if (!this.#planned) {
      // A row that may be the header (header-rows.ts looks for it): a cell that exists without a value (one a merge
      // covers: the streaming parser keeps no merges) still makes a column, so the values under a merged or empty
      // header cell are not longer than the header. The reader fits the rows it read ahead to the header (fitSheetRow).
      while (fields.length < Math.max(row.cellCount, this.#width ?? 0)) fields.push('');
      this.#width ??= fields.length;
    } else while (fields.length < (this.#width ?? 0)) fields.push('');
    return { fields, line: row.number, endLine: row.number, problems };
  }

  take(): WorkbookRecord | undefined {
    const record = this.#queue.shift();
    if (record !== undefined) this.#recordsTaken++;
    return record;
  }

  async next(): Promise<WorkbookRecord | undefined> {
    for (;;) {
      const queued = this.take();
      if (queued !== undefined) return queued;
      if (this.#ended) return undefined;
      const row = await this.#nextRow();
      if (row === undefined) {
        this.#ended = true;
        return undefined;
      }
      this.#rowsGiven++;
      const record = this.#record(row);
      if (record !== null) {
        this.#recordsMade++;
        this.#queue.push(record);
      }
    }
  }

  /** The next row of the chosen sheet; a FileFormatError for a broken workbook or one that stops giving rows. */
  async #nextRow(): Promise<ExcelJS.Row | undefined> {
    const rows = this.#rows;
    if (rows === null) throw new Error('open() first');
    const stall = new AbortController();
    const stallMs = this.#options.stallMs ?? XLSX_STALL_MS;
    const stalled = this.#clock.sleep(stallMs, stall.signal).then(
      () => 'stalled' as const,
      () => 'cancelled' as const,
    );
    try {
      const result = await Promise.race([rows.next(), stalled]);
      if (result === 'stalled') {
        throw new FileFormatError('WORKBOOK_CORRUPT', `the workbook stopped giving rows for ${Math.round(stallMs / 1000)} s after row ${this.#rowsGiven}: it is probably damaged. Save it again`, { file: this.#file });
      }
      if (result === 'cancelled') throw new Error('unreachable: the stall timer was cancelled while waiting');
      if (result.done === true) return undefined;
      this.#budget.cells(result.value.cellCount);
      return result.value;
    } catch (error) {
      this.close();
      throw translateWorkbookError(error, this.#file);
    } finally {
      stall.abort();
    }
  }

  planned(layout: HeaderLayout): void {
    this.#planned = true;
    this.#width = layout.width;
    this.#separators = layout.numberSeparators;
  }

  /** Workbooks have no quotes to leave open: a record's width is the reader's business alone. */
  checkWidth(): void {}

  /** After the last record: every row with a value the sheet gave was handed out. */
  finish(): void {
    if (this.#ended && this.#queue.length === 0 && this.#recordsTaken === this.#recordsMade) return;
    throw new FileFormatError(
      'RECONCILE_FAILED',
      `the sheet gave ${this.#recordsMade} rows with values (of ${this.#rowsGiven}), the reader took ${this.#recordsTaken}`,
      { file: this.#file },
    );
  }

  /** The sheet's XML read so far and its size (what a progress bar can know of a compressed workbook). */
  bytes(): { readonly bytesRead: number; readonly totalBytes: number } {
    return { bytesRead: this.#sheetBytesRead, totalBytes: this.#sheetBytes || this.#totalBytes };
  }

  close(): void {
    for (const stream of this.#streams) if (!stream.destroyed) stream.destroy();
  }
}

/** exceljs's and the zip library's errors as a FileFormatError (I/O errors stay as they are). */
/**
 * Cells exceljs 4.4.0's streaming reader misreads without a word, with the sentence that says so: an ISO date cell
 * (`t="d"`) it parses as a number (2026-03-01 became the serial 2026, 1905-07-18), an inline string in formatted runs
 * (`<is><r>`) of which it keeps the last run only; and a cell without its reference, on which it fails with a
 * TypeError. All are rare (Strict Open XML, some generators): such a sheet fails as a whole, saying why, rather than
 * send a wrong date or a cut id.
 */
export function misreadCells(sheetXml: string): string | null {
  if (/\st\s*=\s*["']d["']/.test(sheetXml)) {
    return 'the sheet stores dates as ISO text cells (t="d", as "Strict Open XML" workbooks do), which the reader would misread: save it in Excel as "Excel Workbook (*.xlsx)" and drop it again';
  }
  if (/<(?:\w{1,32}:)?is>\s{0,64}<(?:\w{1,32}:)?r[\s>]/.test(sheetXml)) {
    return 'the sheet holds text written inline in several formatted runs, of which the reader would keep only the last: save it again in Excel or LibreOffice and drop it again';
  }
  // A cell without its reference (r="B7"), which the format allows and some generators leave out: exceljs fails on it.
  // No part of a pattern may run past a '<' or 512 characters: a chunk of `<c <c <c ...` made the unbounded form
  // look to the chunk's end from each `<c`, 1.3 s a 64 KiB chunk, the event loop held all the while.
  if (/<(?:\w{1,32}:)?c(?![^<>]{0,512}\sr=)(?:\s[^<>]{0,512})?>/.test(sheetXml)) {
    return 'the sheet has cells without their reference (r="B7"), which the reader cannot place: save it again in Excel or LibreOffice and drop it again';
  }
  return null;
}
/** Characters kept from one chunk to the next so that a marker cut between two chunks is still seen. */
const MISREAD_CELLS_CARRY = 64;

function translateWorkbookError(error: unknown, file: string): unknown {
  if (error instanceof FileFormatError) return error;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return error; // ENOENT, EACCES, EIO: not a broken file
  const message = error instanceof Error ? error.message : String(error);
  return new FileFormatError('WORKBOOK_CORRUPT', `the workbook cannot be read (${message}): save it again as .xlsx`, { file });
}

/**
 * Checks the file's bytes, reads the workbook's parts up to the chosen sheet, and resolves once its first record can
 * be asked for. A broken workbook rejects with a FileFormatError.
 */
export async function openXlsxRecords(file: string, options: XlsxOptions = {}): Promise<XlsxRecords> {
  const size = (await stat(file)).size;
  await checkWorkbookFile(file, size);
  const records = new XlsxRecords(file, size, options);
  try {
    const parts = options.parts ?? (await zipParts(file));
    await records.open(parts);
  } catch (error) {
    records.close();
    throw translateWorkbookError(error, file);
  }
  return records;
}

/** The archive's parts by path, from its central directory (the end-of-directory record may follow a comment). */
async function zipParts(file: string): Promise<Parts> {
  const directory = await Open.file(file, { tailSize: 22 + 65_535 });
  return new Map(directory.files.map((f) => [f.path, f]));
}
