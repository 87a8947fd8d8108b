/**
 * `readRows`: a source file as a stream of row outcomes, in constant memory.
 *
 *   file -> records (record-source.ts; open-records.ts chooses CSV or a workbook) -> header plan (header.ts)
 *        -> per row: field count, cleaning, fill-down, skip rule, mapping, conversion, schema (map-row.ts),
 *           a workbook's unusable cells (cell-problems.ts)
 *        -> { kind: 'row' } | { kind: 'reject' }   (skipped rows and blank lines are counted, not yielded)
 *
 * Every record is accounted for: the header, a row (accepted, rejected or skipped, exactly one fate each), or a
 * blank line. A row with the wrong field count is a reject, unless it spans several lines (then a stray quote
 * merged lines: the file fails as UNCLOSED_QUOTE). At the end the source's own counts must equal what the reader
 * consumed (RECONCILE_FAILED otherwise): a loss would be a bug, not silent.
 * Backpressure: the file is read only as fast as the consumer takes outcomes.
 */
import { basename } from 'node:path';
import type { Entity } from '../../api/schemas/index.ts';
import type { Clock } from '../../clock.ts';
import { cellProblemErrors } from './cell-problems.ts';
import { compileSource } from './compile-source.ts';
import type { CompiledSource, ReadOptions } from './compile-source.ts';
import { QUEUED_RECORDS } from './csv-fast-lane.ts';
import { FileFormatError } from './errors.ts';
import type { RecordOf } from './field-kinds.ts';
import { columnsRead, narrowedPlan, planHeader, type HeaderPlan } from './header.ts';
import { locateHeader } from './header-rows.ts';
import type { CellCleaner } from './clean-cell.ts';
import { isBlank } from './parser.ts';
import { RowMapper, type Mapped, type RowError } from './map-row.ts';
import { fixAwareRecords } from './fix-records.ts';
import { openRecords } from './open-records.ts';
import type { ByteRange } from './open-source.ts';
import { UNREAD_FIELDS, type RecordSource, type SourceRecord } from './record-source.ts';
import type { HeaderInfo, ReadProgress, ReadSummary, RowOutcome, RowsUnread } from './types.ts';

/**
 * One file being read. Iterate it once (or `close()` it): the file stays open until then. Outcomes come in
 * file order; a FileFormatError thrown during iteration fails the whole file, whatever was yielded before.
 */
export interface RowReader<R> extends AsyncIterable<RowOutcome<R>> {
  readonly header: HeaderInfo;
  /**
   * The same outcomes in file order, in chunks of those the source has already produced (at most a few hundred):
   * for the push's hot path, where an await per row cost more than mapping the row. The counts of `summary()`
   * include the chunk being consumed. Iterate either the reader or its chunks, once. A reader opened with
   * `ReadInit.unread` is read this way only: its chunks hold the rows left unread (RowsUnread).
   */
  chunks(): AsyncIterable<(RowOutcome<R> | RowsUnread)[]>;
  /** Live, for a progress bar. */
  progress(): ReadProgress;
  /** Counts so far; `complete` once iteration ended normally. */
  summary(): ReadSummary;
  /** Stops reading and closes the file (breaking out of `for await` does the same). */
  close(): void;
  /**
   * An `unvalidated` (or `keysOnly`) reader's conversion of a row, as its chunks would convert it; null for a reader
   * that validates. For delta push's line mode, which reads most lines as bytes (delta/fast/line-scan.ts) or only a few lines
   * at their place in the file (delta/settle-lines.ts), and converts them here, not through the reader's iteration.
   */
  conversion(): RowConversion<R> | null;
}

/** How an `unvalidated` reader converts a row (RowMapper.convert; with its narrowed plan for `keysOnly`). */
export interface RowConversion<R> {
  /** The columns the conversion reads (with `keysOnly`: the key's, and those of `skip_rows`): the cells `convert` needs. */
  readonly cells: readonly number[];
  /**
   * A row of the header's width that is not blank (outcome() checks both first): `fields` need hold only `cells`.
   * Null: a cell does not convert (a reject).
   */
  convert(fields: readonly string[], line: number): Mapped<R> | null;
  /** The columns its fields are taken from as they are, and the cleaner's test for that (RowMapper.verbatim); or null. */
  readonly verbatim: ReturnType<RowMapper<R>['verbatim']>;
  /** The columns of the required fields: the cells `mayBeNote` reads. */
  readonly noteCells: readonly number[];
  /**
   * Whether a row of the header's width (`fields` holding `noteCells`) looks like no data (notData): the reader holds
   * such a row until a data row follows, and skips it when none does, so its fate depends on the rows after it.
   */
  mayBeNote(fields: readonly string[]): boolean;
}

export interface ReadInit {
  /** Read chunk size in bytes (default 64 KiB); tests use small ones. */
  readonly highWaterMark?: number;
  /**
   * The file's name as it was dropped (default: the path's own name): what `file_name` is matched against and
   * `{file.name}` gives. A claimed file's path in processing/ carries the ledger id in front of it.
   */
  readonly name?: string;
  /** The clock a workbook's stall timeout runs on (xlsx-records.ts); default the system's. */
  readonly clock?: Clock;
  /**
   * Lines whose rows the caller will not look at (delta push's send pass: rows an earlier pass of this file found
   * unchanged or sent before, so valid): not mapped or validated, handed out as a row with an empty record
   * (UNMAPPED) and counted as valid. What later rows take from them (fill_down) is kept.
   */
  readonly unmapped?: (line: number) => boolean;
  /**
   * A corrected rejects CSV of a file that was itself such a fix: its `line` cells are lines of that fix, not of the
   * first file, so `{line}` cannot be rebuilt from them (rejects-fix.ts nameForTemplates follows the chain for names).
   */
  readonly fixOfFix?: boolean;
  /**
   * Of the `unmapped` lines, those the caller knows to be valid rows of one line (an earlier pass of this same file
   * read them): a CSV source may hand them out without splitting them (RecordSource.skipUnread), unless a fill_down
   * column must be carried down from them; the reader then yields consecutive ones as one RowsUnread outcome. Counted
   * as valid rows, like any unmapped row.
   */
  readonly unread?: (line: number) => boolean;
  /**
   * Rows converted but not validated against the entity's schema (RowMapper.convert): delta push's comparison. A row
   * whose cells do not convert is a reject with the code `conversion` and no detail; the send pass reads it again.
   */
  readonly unvalidated?: boolean;
  /**
   * CSV: read the file as if it held only these bytes (open-source.ts ByteRange): delta push's first pass reads a
   * large file in halves on two threads (delta/two-halves.ts), each as the header line followed by its own lines.
   */
  readonly byteRanges?: readonly ByteRange[];
  /**
   * Map only these fields of each row (delta push's line mode: a row's key, its line hash taken from its cells,
   * compare.ts): a row is the record of these fields, converted, not validated (implies `unvalidated`).
   */
  readonly keysOnly?: readonly string[];
}

/**
 * Rows under the table that look like no data (a delivery note, a disclaimer) held at most, so a file of such rows
 * holds no more than this many records in memory; of a longer tail only the last ones are skipped.
 */
export const NOTE_LINES_HELD = 50;

/** The record of a row the caller asked not to map (ReadInit.unmapped). */
export const UNMAPPED: Readonly<Record<string, never>> = Object.freeze({});

class MappedRowReader<R> implements RowReader<R> {
  private headerInfo: HeaderInfo;
  private readonly file: string;
  private readonly records: RecordSource;
  private mapper: RowMapper<R> | undefined;
  private plan: HeaderPlan | undefined;
  /** The columns the mapper reads (the narrowed plan's with ReadInit.keysOnly). */
  private mappedCells: readonly number[] = [];
  private started = false;
  private complete = false;
  private lastLine = 0;
  private rows = 0;
  private accepted = 0;
  private rejected = 0;
  private skipped = 0;
  private blankLines = 0;
  private readonly unmapped: ((line: number) => boolean) | undefined;
  private readonly fixOfFix: boolean;
  private readonly unread: ((line: number) => boolean) | undefined;
  private readonly unvalidated: boolean;
  private readonly keysOnly: readonly string[] | undefined;
  /** Records read past the header while looking for it (header-rows.ts): handed out before the source's. */
  private pending: SourceRecord[] = [];
  /** Rows that look like no data (notData), held until a data row follows; skipped at the end of the file. */
  private held: SourceRecord[] = [];
  /** The columns of each required field read from the file (notData); empty: the rule is off. */
  private requiredColumns: readonly (readonly number[])[] = [];
  private clean: CellCleaner | undefined;

  constructor(file: string, records: RecordSource, compiled: CompiledSource, fixFile: boolean, init: ReadInit = {}) {
    this.unmapped = init.unmapped;
    this.fixOfFix = init.fixOfFix === true;
    this.unread = init.unread;
    this.unvalidated = init.unvalidated === true || init.keysOnly !== undefined;
    this.keysOnly = init.keysOnly;
    this.file = file;
    this.records = records;
    this.headerInfo = {
      file,
      entity: compiled.entity,
      encoding: records.format.encoding,
      bom: records.format.bom,
      delimiter: records.format.delimiter,
      sheet: records.format.sheet,
      fixFile,
      headers: [],
      headerLine: 1,
      headerEndLine: 1,
      fields: [],
      customColumns: [],
      ignoredColumns: [],
      usedColumns: [],
      warnings: [...records.format.warnings],
    };
  }

  /** Reads and plans the header (found where header-rows.ts says); called once by `readRows`. */
  async readHeader(compiled: CompiledSource, fileGroups: Readonly<Record<string, string>>): Promise<void> {
    const found = await locateHeader(this.records, compiled, this.file, this.headerInfo.fixFile);
    if (found === null) throw new FileFormatError('EMPTY_FILE', 'the file is empty', { file: this.file });
    this.pending = this.records.format.sheet === null ? found.readAhead : found.readAhead.map((r) => fitSheetRow(r, found.fields.length));
    this.lastLine = found.endLine;
    // The lines above the header are not data: counted as skipped rows (or blank lines), never rejected.
    this.rows += found.skippedAbove;
    this.skipped += found.skippedAbove;
    this.blankLines += found.blankAbove;
    if (isBlank(found.fields)) {
      throw new FileFormatError('NO_HEADER', `line ${found.line} has no column names`, { file: this.file, line: found.line });
    }
    const plan = planHeader(found.fields, compiled, this.file, fileGroups, found.line);
    const narrowed = this.keysOnly === undefined ? null : narrowedPlan(plan, this.keysOnly);
    this.mapper = new RowMapper<R>(narrowed ?? plan, compiled.schema, compiled.clean);
    this.mappedCells = (narrowed ?? plan).used;
    this.plan = plan;
    this.clean = compiled.clean;
    const required = new Set(compiled.fields.filter((f) => f.required).map((f) => f.name));
    this.requiredColumns = plan.plans.filter((p) => required.has(p.field)).map(columnsRead).filter((columns) => columns.length > 0);
    this.records.planned?.({ width: plan.headers.length, numberSeparators: numberColumns(plan, compiled) });
    if (this.unread !== undefined && plan.fillDown.length === 0) this.records.skipUnread?.(this.unread);
    const where = found.line === 1 || found.skippedAbove === 0 ? [] : [`the header is on line ${found.line}${found.endLine > found.line ? `-${found.endLine}` : ''}: the ${found.skippedAbove} line(s) with content above it are skipped, not data`];
    this.headerInfo = {
      ...this.headerInfo,
      headers: plan.headers,
      headerLine: found.line,
      headerEndLine: found.endLine,
      fields: plan.plans.filter((p) => p.sources.length > 0 || p.fallback !== undefined).map((p) => p.field),
      customColumns: plan.customColumns,
      ignoredColumns: plan.ignoredColumns,
      usedColumns: plan.used,
      warnings: [...this.headerInfo.warnings, ...where, ...plan.warnings],
    };
  }

  /** The next record: one read ahead while the header was looked for, else the source's (without waiting). */
  private take(): SourceRecord | undefined {
    return this.pending.length > 0 ? this.pending.shift() : this.records.take();
  }

  /**
   * A row that is no data by the look of it: none of the required fields has a value in it, or it is a line of one
   * cell in a table of several columns (a note written without the delimiters). A delivery note or a disclaimer under
   * the table. Such rows are held (emit): skipped when no data row follows them, read as rows when one does. A row
   * with some required field and more than one cell stays a row (rejected when it lacks the others): a product
   * without its price at the end of a file is no disclaimer.
   */
  private notData(fields: readonly string[], width: number): boolean {
    const required = this.requiredColumns;
    const clean = this.clean;
    if (required.length === 0 || clean === undefined) return false;
    if (fields.length === 1 && width > 1) return true;
    for (const columns of required) for (const i of columns) if (clean(fields[i]) !== '') return false;
    return true;
  }

  /** The outcomes of one record, in file order, into `out`: rows held before it first, unless it too is held. */
  private emit(record: SourceRecord, mapper: RowMapper<R>, width: number, out: (RowOutcome<R> | RowsUnread)[]): void {
    const { fields } = record;
    const unread = fields === UNREAD_FIELDS;
    if (unread || !isBlank(fields)) {
      const valid = unread || this.unmapped?.(record.line) === true;
      if (!valid && this.notData(fields, width)) {
        // Bounded: past NOTE_LINES_HELD, the oldest held row is read as a row (a long tail is no note).
        if (this.held.length >= NOTE_LINES_HELD) {
          const oldest = this.outcome(this.held.shift() as SourceRecord, mapper, width);
          if (oldest !== null) out.push(oldest);
        }
        this.held.push(record);
        this.lastLine = record.endLine;
        return;
      }
      if (this.held.length > 0) {
        const held = this.held;
        this.held = [];
        for (const before of held) {
          const outcome = this.outcome(before, mapper, width);
          if (outcome !== null) out.push(outcome);
        }
      }
    }
    const outcome = this.outcome(record, mapper, width);
    if (outcome !== null) out.push(outcome);
  }

  get header(): HeaderInfo {
    return this.headerInfo;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<RowOutcome<R>> {
    const { mapper, width } = this.begin();
    try {
      const out: (RowOutcome<R> | RowsUnread)[] = [];
      for (;;) {
        // A record already read is taken at once; awaiting only when none is ready saves two promises a row.
        const record = this.take() ?? (await this.records.next());
        if (record === undefined) break;
        this.emit(record, mapper, width, out);
        for (const outcome of out) {
          if (outcome.kind === 'unread') throw new Error('a reader told of unread lines is read with chunks()');
          yield outcome;
        }
        out.length = 0;
      }
      this.end();
    } finally {
      if (!this.complete) this.close();
    }
  }

  async *chunks(): AsyncGenerator<(RowOutcome<R> | RowsUnread)[]> {
    const { mapper, width } = this.begin();
    try {
      for (;;) {
        // Awaits only when the source has nothing ready; what it has is mapped without an await in between.
        const first = this.take() ?? (await this.records.next());
        if (first === undefined) break;
        const chunk: (RowOutcome<R> | RowsUnread)[] = [];
        try {
          for (let record: SourceRecord | undefined = first; record !== undefined; record = this.take()) {
            this.emit(record, mapper, width, chunk);
            if (chunk.length >= QUEUED_RECORDS) break;
          }
        } catch (error) {
          // The outcomes before a file-level failure reach the consumer first, as they would one by one.
          if (chunk.length > 0) yield chunk;
          throw error;
        }
        if (chunk.length > 0) yield chunk;
      }
      this.end();
    } finally {
      if (!this.complete) this.close();
    }
  }

  /** Starts the one iteration a reader allows. */
  private begin(): { mapper: RowMapper<R>; width: number } {
    if (this.started) throw new Error('a RowReader can be iterated only once');
    this.started = true;
    const mapper = this.mapper;
    if (mapper === undefined) throw new Error('readHeader() first');
    return { mapper, width: this.header.headers.length };
  }

  /** Every record was read: the counts must reconcile with the source's. */
  private end(): void {
    // Rows held with no data row after them: the lines after the table (a note, a disclaimer), skipped and counted.
    this.rows += this.held.length;
    this.skipped += this.held.length;
    this.held = [];
    this.records.finish();
    this.complete = true;
  }

  /** The outcome of one record, or null for a blank line or a skipped row; throws the file's failure. */
  private outcome(record: SourceRecord, mapper: RowMapper<R>, width: number): RowOutcome<R> | RowsUnread | null {
    const { fields, line } = record;
    this.lastLine = record.endLine;
    if (fields === UNREAD_FIELDS) {
      // Lines the caller said it will not look at (unread), left unsplit by the source: each a valid row.
      const rows = record.endLine - line + 1;
      this.rows += rows;
      this.accepted += rows;
      return { kind: 'unread', line, endLine: record.endLine };
    }
    if (isBlank(fields)) {
      this.blankLines++;
      return null;
    }
    this.rows++;
    if (fields.length !== width) {
      this.records.checkWidth(record, width);
      this.rejected++;
      const message = `the row has ${fields.length} fields, the header has ${width}`;
      const error = { field: null, code: 'field_count', message };
      return { kind: 'reject', line, rawFields: fields, ...error, errors: [error] };
    }
    if (this.unmapped?.(line) === true) {
      mapper.carry(fields);
      this.accepted++;
      return { kind: 'row', line, record: UNMAPPED as R, rawFields: fields };
    }
    // A row added to a corrected rejects CSV has no original line: where keys are made with {line}, its own line in
    // the fix would be some other row's key, and sending it would overwrite that row.
    if (this.headerInfo.fixFile && mapper.usesLine && (record.templateLine === undefined || this.fixOfFix)) {
      this.rejected++;
      const message = this.fixOfFix
        ? "this corrected rejects CSV fixes another fix, whose lines are not the first file's, and this source's keys are made with {line}: correct the rows in the first file's rejects CSV and drop that one again"
        : "the row has no line number in the line column: this source's keys are made with {line}, so a row added to a corrected rejects file cannot be keyed; put it in a new export";
      const error = { field: null, code: 'no_line', message };
      return { kind: 'reject', line, rawFields: fields, ...error, errors: [error] };
    }
    const templateLine = record.templateLine ?? line;
    const mapped = this.unvalidated ? mapper.convert(fields, templateLine) : mapper.map(fields, templateLine);
    if (mapped === null) {
      this.rejected++;
      const error = { field: null, code: 'conversion', message: 'a cell does not convert' };
      return { kind: 'reject', line, rawFields: fields, ...error, errors: [error] };
    }
    const broken = record.problems !== undefined && record.problems.length > 0 && this.plan !== undefined ? cellProblemErrors(this.plan, record.problems) : null;
    if (broken !== null && mapped.kind !== 'skip') {
      // The cell's own problem first; what the mapping made of its text (an error value is no price) is not repeated.
      const fields = new Set(broken.map((e) => e.field));
      const rest: RowError[] = mapped.kind === 'reject' ? mapped.errors.filter((e) => e.field === null || !fields.has(e.field)) : [];
      const errors = [...broken, ...rest];
      this.rejected++;
      return { kind: 'reject', line, rawFields: record.fields, ...(errors[0] as RowError), errors };
    }
    switch (mapped.kind) {
      case 'ok':
        this.accepted++;
        return { kind: 'row', line, record: mapped.record, rawFields: fields };
      case 'skip':
        this.skipped++;
        return null;
      case 'reject':
        this.rejected++;
        return { kind: 'reject', line, rawFields: fields, ...mapped.first, errors: mapped.errors };
    }
  }

  conversion(): RowConversion<R> | null {
    const mapper = this.mapper;
    if (!this.unvalidated || mapper === undefined) return null;
    const width = this.headerInfo.headers.length;
    return {
      cells: this.mappedCells,
      convert: (fields, line) => mapper.convert(fields, line),
      verbatim: mapper.verbatim(),
      noteCells: [...new Set(this.requiredColumns.flat())],
      mayBeNote: (fields) => this.notData(fields, width),
    };
  }

  progress(): ReadProgress {
    return { ...this.records.bytes(), rows: this.rows };
  }

  summary(): ReadSummary {
    return {
      ...this.header,
      ...this.progress(),
      complete: this.complete,
      accepted: this.accepted,
      rejected: this.rejected,
      skipped: this.skipped,
      blankLines: this.blankLines,
      lines: this.lastLine,
    };
  }

  close(): void {
    this.records.close();
  }
}

/**
 * A sheet's row read before its header was known, as wide as the header: padded, or without the empty cells past it
 * (a cell that exists without a value, as rows read after the header are made: xlsx-records.ts).
 */
function fitSheetRow(record: SourceRecord, width: number): SourceRecord {
  const fields = record.fields.slice();
  while (fields.length > width && fields.at(-1) === '' && record.problems?.some((p) => p.column === fields.length - 1) !== true) fields.pop();
  while (fields.length < width) fields.push('');
  return { ...record, fields };
}

/** The columns of fields whose `number_format` has another decimal separator than the source's, with it. */
function numberColumns(plan: HeaderPlan, compiled: CompiledSource): Map<number, '.' | ','> {
  const separators = new Map<number, '.' | ','>();
  for (const p of plan.plans) {
    const separator = compiled.decimalSeparatorOf(p.field);
    if (separator === compiled.decimalSeparator) continue;
    for (const source of p.sources) if (source.kind === 'column') separators.set(source.index, separator);
  }
  return separators;
}

/** The file's name and the named groups of `file_name` matched against it; a name that does not match fails the file. */
function fileGroupsOf(file: string, name: string, compiled: CompiledSource): Record<string, string> {
  const groups: Record<string, string> = { name };
  if (compiled.fileName === null) return groups;
  const match = compiled.fileName.exec(name);
  if (match === null) {
    throw new FileFormatError('FILE_NAME_MISMATCH', `the file name ${JSON.stringify(name)} does not match file_name ${JSON.stringify(compiled.fileName.source)}`, { file });
  }
  for (const [group, value] of Object.entries(match.groups ?? {})) groups[group] = value ?? '';
  return groups;
}

/**
 * Opens `file` and reads its header. Resolves once the header is planned (so `header.customColumns` is known
 * before any row); rejects with a FileFormatError for a file that cannot be read as a whole, or with the
 * I/O error. Iterate the result once with `for await`; then `summary()` holds the reconciled counts.
 */
export async function readRows<E extends Entity>(
  file: string,
  options: (ReadOptions | CompiledSource) & { entity: E },
  init: ReadInit = {},
): Promise<RowReader<RecordOf[E]>> {
  const compiled = 'compiled' in options ? options : compileSource(options);
  const groups = fileGroupsOf(file, init.name ?? basename(file), compiled);
  const opened = await openRecords(file, compiled, init);
  let fix: Awaited<ReturnType<typeof fixAwareRecords>>;
  try {
    fix = await fixAwareRecords(opened);
  } catch (error) {
    opened.close();
    throw error;
  }
  const reader = new MappedRowReader<RecordOf[E]>(file, fix.records, compiled, fix.layout !== null, init);
  try {
    await reader.readHeader(compiled, groups);
  } catch (error) {
    reader.close();
    throw error;
  }
  return reader;
}
