/**
 * A CSV file as records (record-source.ts): bytes -> decoder (encoding, BOM, invalid bytes) -> csv-parse (arrays),
 * in constant memory, read only as fast as the reader takes records (backpressure).
 *
 * Line numbers are counted here from the fields (csv-parse's own count takes CRLF inside quotes as two lines). At
 * the end the parser's own record and byte counts must equal what was handed out, or the file fails as
 * RECONCILE_FAILED: a loss would be a bug, not silent.
 */
import { pipeline } from 'node:stream';
import type { Info, Parser } from 'csv-parse';
import type { CompiledSource } from './compile-source.ts';
import { detectDelimiter } from './delimiter.ts';
import type { DetectedDelimiter } from './delimiter.ts';
import { DecodeError, FileFormatError } from './errors.ts';
import { decodeFailure } from './line-at.ts';
import { breaksIn, createParser, parseFailure } from './parser.ts';
import type { Parsed } from './parser.ts';
import { openSource } from './open-source.ts';
import type { OpenedSource } from './open-source.ts';
import type { RecordSource, SourceFormat, SourceRecord } from './record-source.ts';

/** Records the reader may hold before it pauses the parser (backpressure; memory stays bounded). */
export const QUEUED_RECORDS = 256;

class CsvRecords implements RecordSource {
  readonly format: SourceFormat;
  readonly #file: string;
  readonly #source: OpenedSource;
  readonly #records: DrainingRecords;
  readonly #parserInfo: () => Info;
  readonly #fed: () => number;
  #endLine = 0;
  #seen = 0;

  constructor(file: string, source: OpenedSource, delimiter: DetectedDelimiter) {
    this.#file = file;
    this.#source = source;
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
    this.#records = drainingRecords(parser);
    this.#parserInfo = () => parser.info;
    this.#fed = () => fed;
    this.format = {
      encoding: source.bom.encoding,
      bom: source.bom.bom,
      delimiter,
      warnings: source.bom.warning === undefined ? [] : [source.bom.warning],
      sheet: null,
    };
  }

  take(): SourceRecord | undefined {
    const fields = this.#records.take();
    if (fields === undefined) return undefined;
    this.#seen++;
    return this.#record(fields);
  }

  async next(): Promise<SourceRecord | undefined> {
    let fields: Parsed;
    try {
      const result = await this.#records.next();
      if (result.done === true) return undefined;
      fields = result.value;
    } catch (error) {
      this.close();
      throw await this.#translate(error, this.#endLine + 1);
    }
    this.#seen++;
    return this.#record(fields);
  }

  checkWidth(record: SourceRecord, width: number): void {
    if (record.fields.length === width || record.endLine === record.line) return;
    throw new FileFormatError(
      'UNCLOSED_QUOTE',
      `the row starting on line ${record.line} runs to line ${record.endLine} inside quotes and has ${record.fields.length} fields ` +
        `(the header has ${width}): most likely a quote that is not closed`,
      { file: this.#file, line: record.line },
    );
  }

  finish(): void {
    const info = this.#parserInfo();
    if (info.records === this.#seen && info.bytes === this.#fed()) return;
    throw new FileFormatError(
      'RECONCILE_FAILED',
      `the CSV parser saw ${info.records} records / ${info.bytes} bytes, the reader ${this.#seen} / ${this.#fed()}`,
      { file: this.#file },
    );
  }

  bytes(): { bytesRead: number; totalBytes: number } {
    return { bytesRead: this.#source.bytesRead(), totalBytes: this.#source.totalBytes };
  }

  close(): void {
    this.#source.close();
  }

  /** The record with the line it starts on; advances the line count past it. */
  #record(fields: Parsed): SourceRecord {
    const line = this.#endLine + 1;
    // One line per record, plus the line breaks its fields hold (csv-parse's own count takes CRLF as two).
    const breaks = breaksIn(fields);
    if (breaks < 0) {
      this.close();
      throw new FileFormatError(
        'UNCLOSED_QUOTE',
        `a quote opened on line ${line} is not closed where its field ends; lines after it would be merged`,
        { file: this.#file, line },
      );
    }
    this.#endLine += 1 + breaks;
    return { fields, line, endLine: this.#endLine };
  }

  async #translate(error: unknown, line: number): Promise<unknown> {
    if (error instanceof DecodeError) return decodeFailure(this.#file, this.#source.bom, error);
    return parseFailure(error, this.#file, line);
  }
}

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

/** Opens `file` as CSV: BOM, decoder, delimiter (detected from the header line when `auto`). */
export async function openCsvRecords(file: string, compiled: CompiledSource, highWaterMark?: number): Promise<RecordSource> {
  const source = await openSource(file, compiled.encoding, highWaterMark);
  let delimiter: DetectedDelimiter;
  if (compiled.delimiter === 'auto') {
    const detected = detectDelimiter(source.firstLine);
    if (!detected.ok) {
      source.close();
      throw new FileFormatError('DELIMITER_NOT_DETECTED', detected.message, { file, line: 1 });
    }
    delimiter = detected.delimiter;
  } else delimiter = compiled.delimiter;
  return new CsvRecords(file, source, delimiter);
}
