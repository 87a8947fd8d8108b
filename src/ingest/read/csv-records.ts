/**
 * A CSV file as records (record-source.ts): bytes -> decoder (encoding, BOM, invalid bytes) -> records
 * (csv-fast-lane.ts: split directly up to the first quote, csv-parse from there), in constant memory, read only as fast as the reader takes records (backpressure).
 *
 * Line numbers are counted here from the fields (csv-parse's own count takes CRLF inside quotes as two lines). At
 * the end the record and byte counts of the split and of csv-parse must equal what was handed out, or the file fails as
 * RECONCILE_FAILED: a loss would be a bug, not silent.
 */
import type { CompiledSource } from './compile-source.ts';
import { csvRecordStream, UnreadLines, type RecordStream, type StreamRecord } from './csv-fast-lane.ts';
import { detectDelimiterIn } from './delimiter.ts';
import type { DetectedDelimiter } from './delimiter.ts';
import { DecodeError, FileFormatError } from './errors.ts';
import { decodeFailure } from './line-at.ts';
import { breaksIn, parseFailure, readsAsRowsWithoutQuotes } from './parser.ts';
import { openSource } from './open-source.ts';
import type { ByteRange, OpenedSource } from './open-source.ts';
import { workbookInCsvSource } from './xlsx-check.ts';
import { UNREAD_FIELDS, type RecordSource, type SourceFormat, type SourceRecord } from './record-source.ts';

class CsvRecords implements RecordSource {
  readonly format: SourceFormat;
  readonly #file: string;
  readonly #source: OpenedSource;
  readonly #records: RecordStream;
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
    this.#records = csvRecordStream(counted(), delimiter);
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
    return this.#record(fields);
  }

  async next(): Promise<SourceRecord | undefined> {
    let fields: StreamRecord;
    try {
      const result = await this.#records.next();
      if (result.done === true) return undefined;
      fields = result.value;
    } catch (error) {
      this.close();
      throw await this.#translate(error, this.#endLine + 1);
    }
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

  skipUnread(unread: (line: number) => boolean): void {
    this.#records.skipUnread(unread);
  }

  finish(): void {
    const info = this.#records.counts();
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

  /** The record with the line it starts on; advances the line and record counts past it. */
  #record(fields: StreamRecord): SourceRecord {
    const line = this.#endLine + 1;
    if (fields instanceof UnreadLines) {
      // Lines not read (skipUnread): the fast lane's records are one line each.
      this.#seen += fields.count;
      this.#endLine += fields.count;
      return { fields: UNREAD_FIELDS, line, endLine: this.#endLine };
    }
    this.#seen++;
    // One line per record, plus the line breaks its fields hold (csv-parse's own count takes CRLF as two); the fast
    // lane's records have none.
    const breaks = this.#records.parsing() ? breaksIn(fields) : 0;
    if (breaks < 0) {
      this.close();
      throw new FileFormatError(
        'UNCLOSED_QUOTE',
        `a quote opened on line ${line} is not closed where its field ends; lines after it would be merged`,
        { file: this.#file, line },
      );
    }
    if (breaks > 0 && readsAsRowsWithoutQuotes(fields, this.format.delimiter)) {
      this.close();
      throw new FileFormatError(
        'UNCLOSED_QUOTE',
        `a quote on line ${line} runs to line ${line + breaks}, and read without it each of those lines is a row of ${fields.length} fields: ` +
          'most likely a ditto mark (") or a stray quote; write the value out, or double a quote that belongs to the text ("")',
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

/** Opens `file` as CSV: BOM, decoder, delimiter (detected from the header line when `auto`). */
export async function openCsvRecords(file: string, compiled: CompiledSource, highWaterMark?: number, byteRanges?: readonly ByteRange[]): Promise<RecordSource> {
  const workbook = await workbookInCsvSource(file);
  if (workbook !== null) throw new FileFormatError('NOT_CSV', workbook, { file });
  const source = await openSource(file, compiled.encoding, highWaterMark, byteRanges);
  let delimiter: DetectedDelimiter;
  if (compiled.delimiter === 'auto') {
    const detected = detectDelimiterIn(source.headLines, compiled.headerRow);
    if (!detected.ok) {
      source.close();
      throw new FileFormatError('DELIMITER_NOT_DETECTED', detected.message, { file, line: 1 });
    }
    delimiter = detected.delimiter;
  } else delimiter = compiled.delimiter;
  return new CsvRecords(file, source, delimiter);
}
