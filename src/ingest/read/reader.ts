/**
 * `readRows`: a source file as a stream of row outcomes, in constant memory.
 *
 *   bytes -> decoder (encoding, BOM, invalid bytes) -> csv-parse (arrays) -> header plan
 *         -> per row: field count, mapping, conversion, schema -> { kind: 'row' } | { kind: 'reject' }
 *
 * Every record is accounted for: the header, a row (accepted or rejected, exactly one outcome each), or a
 * blank line. A row with the wrong field count is a reject, unless it spans several lines (then a stray quote
 * merged lines: the file fails as UNCLOSED_QUOTE). At the end the parser's own record and byte counts must
 * equal what the reader consumed, or the file fails as RECONCILE_FAILED: a loss would be a bug, not silent.
 * Backpressure: the file is read only as fast as the consumer takes outcomes.
 */
import { pipeline } from 'node:stream';
import type { Info } from 'csv-parse';
import type { Entity } from '../../api/schemas/index.ts';
import { compileSource } from './compile-source.ts';
import type { CompiledSource, ReadOptions } from './compile-source.ts';
import { detectDelimiter } from './delimiter.ts';
import type { DetectedDelimiter } from './delimiter.ts';
import { DecodeError, FileFormatError } from './errors.ts';
import { WRITE_SCHEMAS } from './field-kinds.ts';
import type { RecordOf } from './field-kinds.ts';
import { planHeader } from './header.ts';
import { decodeFailure } from './line-at.ts';
import { breaksIn, createParser, isBlank, parseFailure } from './parser.ts';
import type { Parser } from 'csv-parse';
import type { Parsed } from './parser.ts';
import { RowMapper } from './map-row.ts';
import { openSource } from './open-source.ts';
import type { OpenedSource } from './open-source.ts';
import type { HeaderInfo, ReadProgress, ReadSummary, RowOutcome } from './types.ts';

/**
 * One file being read. Iterate it once (or `close()` it): the file stays open until then. Outcomes come in
 * file order; a FileFormatError thrown during iteration fails the whole file, whatever was yielded before.
 */
export interface RowReader<R> extends AsyncIterable<RowOutcome<R>> {
  readonly header: HeaderInfo;
  /**
   * The same outcomes in file order, in chunks of those the parser has already produced (at most a few hundred):
   * for the push's hot path, where an await per row cost more than mapping the row. The counts of `summary()`
   * include the chunk being consumed. Iterate either the reader or its chunks, once.
   */
  chunks(): AsyncIterable<RowOutcome<R>[]>;
  /** Live, for a progress bar. */
  progress(): ReadProgress;
  /** Counts so far; `complete` once iteration ended normally. */
  summary(): ReadSummary;
  /** Stops reading and closes the file (breaking out of `for await` does the same). */
  close(): void;
}

export interface ReadInit {
  /** Read chunk size in bytes (default 64 KiB); tests use small ones. */
  readonly highWaterMark?: number;
  /**
   * Lines whose rows the caller will not look at (delta push's send pass: rows it already compared and will not
   * send): not mapped or validated, yielded as a row with an empty record (UNMAPPED) and counted as accepted. Only for
   * lines an earlier read of the same file found valid.
   */
  readonly unmapped?: (line: number) => boolean;
  /**
   * Rows converted but not validated against the entity's schema (RowMapper.convert): delta push's comparison. A
   * row whose cells do not convert is a reject with the code `conversion` and no detail; the send pass reads it again.
   */
  readonly unvalidated?: boolean;
}

/** The record of a row the caller asked not to map (ReadInit.unmapped). */
export const UNMAPPED: Readonly<Record<string, never>> = Object.freeze({});

class CsvRowReader<R> implements RowReader<R> {
  private headerInfo: HeaderInfo;
  private readonly file: string;
  private readonly source: OpenedSource;
  private readonly records: DrainingRecords;
  private readonly parserInfo: () => Info;
  private readonly fed: () => number;
  private mapper: RowMapper<R> | undefined;
  private started = false;
  private complete = false;
  private endLine = 0;
  private seen = 0;
  private rows = 0;
  private accepted = 0;
  private rejected = 0;
  private blankLines = 0;

  private readonly unmapped: ((line: number) => boolean) | undefined;
  private readonly unvalidated: boolean;

  constructor(file: string, source: OpenedSource, compiled: CompiledSource, delimiter: DetectedDelimiter, init: ReadInit) {
    this.unmapped = init.unmapped;
    this.unvalidated = init.unvalidated === true;
    this.file = file;
    this.source = source;
    let fed = 0;
    const chunks = source.chunks;
    async function* counted() {
      for await (const chunk of chunks) {
        fed += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
        yield chunk;
      }
    }
    const parser = createParser(delimiter);
    // Errors reach us through the iterator; the callback only keeps them from being unhandled.
    pipeline(counted(), parser, () => undefined);
    this.records = drainingRecords(parser);
    this.parserInfo = () => parser.info;
    this.fed = () => fed;
    this.headerInfo = {
      file,
      entity: compiled.entity,
      encoding: source.bom.encoding,
      bom: source.bom.bom,
      delimiter,
      headers: [],
      fields: [],
      customColumns: [],
      ignoredColumns: [],
      warnings: source.bom.warning === undefined ? [] : [source.bom.warning],
    };
  }

  /** Reads and plans the header; called once by `readRows`. */
  async readHeader(compiled: CompiledSource): Promise<void> {
    const first = await this.next();
    if (first === undefined) throw new FileFormatError('EMPTY_FILE', 'the file is empty', { file: this.file });
    this.line(first);
    if (isBlank(first)) {
      throw new FileFormatError('NO_HEADER', 'line 1 has no column names', { file: this.file, line: 1 });
    }
    const plan = planHeader(first, compiled, this.file);
    this.mapper = new RowMapper<R>(plan, WRITE_SCHEMAS[compiled.entity]);
    this.headerInfo = {
      ...this.headerInfo,
      headers: plan.headers,
      fields: plan.plans.filter((p) => p.index >= 0 || p.fallback !== undefined).map((p) => p.field),
      customColumns: plan.customColumns,
      ignoredColumns: plan.ignoredColumns,
      warnings: [...this.headerInfo.warnings, ...plan.warnings],
    };
  }

  get header(): HeaderInfo {
    return this.headerInfo;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<RowOutcome<R>> {
    const { mapper, width } = this.begin();
    try {
      for (;;) {
        // A record already parsed is taken at once; awaiting only when the queue is empty saves two promises a row.
        const record = this.take() ?? (await this.next());
        if (record === undefined) break;
        const outcome = this.outcome(record, mapper, width);
        if (outcome !== null) yield outcome;
      }
      this.end();
    } finally {
      if (!this.complete) this.close();
    }
  }

  async *chunks(): AsyncGenerator<RowOutcome<R>[]> {
    const { mapper, width } = this.begin();
    try {
      for (;;) {
        // Awaits only when the parser has nothing queued; what it has is mapped without an await in between.
        const first = this.take() ?? (await this.next());
        if (first === undefined) break;
        const chunk: RowOutcome<R>[] = [];
        try {
          for (let record: Parsed | undefined = first; record !== undefined; record = this.take()) {
            const outcome = this.outcome(record, mapper, width);
            if (outcome !== null) chunk.push(outcome);
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

  /** Every record was read: the counts must reconcile with the parser's. */
  private end(): void {
    this.reconcile();
    this.complete = true;
  }

  /** The outcome of one record, or null for a blank line; throws the file's failure (lines merged by a quote). */
  private outcome(record: Parsed, mapper: RowMapper<R>, width: number): RowOutcome<R> | null {
    const line = this.line(record);
    if (isBlank(record)) {
      this.blankLines++;
      return null;
    }
    this.rows++;
    if (record.length !== width) {
      if (this.endLine > line) throw this.mergedLines(line, record.length, width);
      this.rejected++;
      const message = `the row has ${record.length} fields, the header has ${width}`;
      const error = { field: null, code: 'field_count', message };
      return { kind: 'reject', line, rawFields: record, ...error, errors: [error] };
    }
    if (this.unmapped?.(line) === true) {
      this.accepted++;
      return { kind: 'row', line, record: UNMAPPED as R, rawFields: record };
    }
    if (this.unvalidated) {
      const converted = mapper.convert(record);
      if (converted !== null) {
        this.accepted++;
        return { kind: 'row', line, record: converted as R, rawFields: record };
      }
      this.rejected++;
      const error = { field: null, code: 'conversion', message: 'a cell does not convert' };
      return { kind: 'reject', line, rawFields: record, ...error, errors: [error] };
    }
    const mapped = mapper.map(record);
    if (mapped.ok) {
      this.accepted++;
      return { kind: 'row', line, record: mapped.record, rawFields: record };
    }
    this.rejected++;
    return { kind: 'reject', line, rawFields: record, ...mapped.first, errors: mapped.errors };
  }

  progress(): ReadProgress {
    return { bytesRead: this.source.bytesRead(), totalBytes: this.source.totalBytes, rows: this.rows };
  }

  summary(): ReadSummary {
    return {
      ...this.header,
      ...this.progress(),
      complete: this.complete,
      accepted: this.accepted,
      rejected: this.rejected,
      blankLines: this.blankLines,
      lines: this.endLine,
    };
  }

  close(): void {
    this.source.close();
  }

  /** The next record if the parser already produced it, else undefined (then `next()` waits for it or the end). */
  private take(): Parsed | undefined {
    const record = this.records.take();
    if (record !== undefined) this.seen++;
    return record;
  }

  /** The next parsed record, with every failure turned into a FileFormatError. */
  private async next(): Promise<Parsed | undefined> {
    try {
      const result = await this.records.next();
      if (result.done === true) return undefined;
      this.seen++;
      return result.value;
    } catch (error) {
      this.close();
      throw await translateError(error, this.file, this.source, this.endLine + 1);
    }
  }

  /** The line a record starts on; advances our line count past it. */
  private line(record: Parsed): number {
    const start = this.endLine + 1;
    // One line per record, plus the line breaks its fields hold (csv-parse's own count takes CRLF as two).
    const breaks = breaksIn(record);
    if (breaks < 0) {
      throw new FileFormatError(
        'UNCLOSED_QUOTE',
        `a quote opened on line ${start} is not closed where its field ends; lines after it would be merged`,
        { file: this.file, line: start },
      );
    }
    this.endLine += 1 + breaks;
    return start;
  }

  private mergedLines(line: number, fields: number, width: number): FileFormatError {
    return new FileFormatError(
      'UNCLOSED_QUOTE',
      `the row starting on line ${line} runs to line ${this.endLine} inside quotes and has ${fields} fields ` +
        `(the header has ${width}): most likely a quote that is not closed`,
      { file: this.file, line },
    );
  }

  private reconcile(): void {
    const info = this.parserInfo();
    if (info.records === this.seen && info.bytes === this.fed()) return;
    throw new FileFormatError(
      'RECONCILE_FAILED',
      `the CSV parser saw ${info.records} records / ${info.bytes} bytes, the reader ${this.seen} / ${this.fed()}`,
      { file: this.file },
    );
  }
}

/** Records the reader may hold before it pauses the parser (backpressure; memory stays bounded). */
const QUEUED_RECORDS = 256;

/**
 * The parser's records as an async iterator that yields every record parsed before an error, then throws it. A
 * stream's own async iterator rejects as soon as the stream errors and drops the records still buffered, so the
 * line reported for an unclosed quote depended on how fast the consumer had read the rows before it.
 */
interface DrainingRecords extends AsyncIterator<Parsed> {
  /** A queued record, without waiting; undefined when none is queued (an error or the end is left to `next`). */
  take(): Parsed | undefined;
}

function drainingRecords(parser: Parser): DrainingRecords {
  const queue: Parsed[] = [];
  let failure: { error: unknown } | null = null;
  let ended = false;
  let wake: (() => void) | null = null;
  const notify = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  parser.on('data', (record: Parsed) => {
    queue.push(record);
    if (queue.length >= QUEUED_RECORDS) parser.pause();
    notify();
  });
  parser.on('error', (error: unknown) => {
    failure = { error };
    notify();
  });
  parser.on('end', () => {
    ended = true;
    notify();
  });
  const take = (): Parsed | undefined => {
    const record = queue.shift();
    if (record !== undefined && queue.length < QUEUED_RECORDS / 2 && parser.isPaused()) parser.resume();
    return record;
  };
  return {
    take,
    async next(): Promise<IteratorResult<Parsed>> {
      for (;;) {
        const record = take();
        if (record !== undefined) return { value: record, done: false };
        if (failure !== null) throw (failure).error;
        if (ended) return { value: undefined, done: true };
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
  };
}

async function translateError(error: unknown, file: string, source: OpenedSource, line: number): Promise<unknown> {
  if (error instanceof DecodeError) return decodeFailure(file, source.bom, error);
  return parseFailure(error, file, line);
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
  const source = await openSource(file, compiled.encoding, init.highWaterMark);
  let delimiter: DetectedDelimiter;
  if (compiled.delimiter === 'auto') {
    const detected = detectDelimiter(source.firstLine);
    if (!detected.ok) {
      source.close();
      throw new FileFormatError('DELIMITER_NOT_DETECTED', detected.message, { file, line: 1 });
    }
    delimiter = detected.delimiter;
  } else delimiter = compiled.delimiter;
  const reader = new CsvRowReader<RecordOf[E]>(file, source, compiled, delimiter, init);
  try {
    await reader.readHeader(compiled);
  } catch (error) {
    reader.close();
    throw error;
  }
  return reader;
}
