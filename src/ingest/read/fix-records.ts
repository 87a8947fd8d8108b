/**
 * A corrected rejects CSV dropped back into an inbox (README, "Fix and drop again"), as records of the file it fixes:
 * when the header is the rejects layout the agent writes (rejects-csv.ts: `line`, the file's own columns, `extra_N`,
 * `field`, `code`, `message`), the agent's columns are left out of every record, so the mapping sees the original
 * file's header and rows, and the rows still wrong come back in a rejects CSV of the same layout, not nested in it.
 *
 * - A record as wide as the rejects header loses the agent's columns; its `line` cell (the row's line in the file
 *   it fixes) is what a `{line}` template reads, so a key built from it stays the key the row would have had. The
 *   record's own line stays its line in the dropped file: the one a person finds in it.
 * - A record of another width (a cell added or removed while editing) is kept whole: the reader rejects it for its
 *   field count, with every cell, as it would any row of the wrong width.
 * - `extra_N` cells (fields beyond the original header) are not read.
 * - A cell keeps no apostrophe the rejects writer put before a formula-like cell (`'=1+2` is read as `=1+2`): the
 *   corrected row is read as the original's row was.
 * Any other header: the records pass through unchanged.
 */
import { fromSpreadsheetSafe, recogniseRejectsHeader } from '../file/rejects-csv.ts';
import type { HeaderLayout, RecordSource, SourceFormat, SourceRecord } from './record-source.ts';

/** What the reader tells about a fix file: the original's columns, and how many cells of a record are the agent's. */
export interface FixLayout {
  readonly headers: readonly string[];
  readonly extras: number;
}

/** The records after a header already read (given back first); without a layout, unchanged. */
class FixRecords implements RecordSource {
  readonly #inner: RecordSource;
  readonly #width: number;
  /** The original file's column count; null when this is no fix file. */
  readonly #own: number | null;
  #header: SourceRecord | undefined;

  constructor(inner: RecordSource, header: SourceRecord, layout: FixLayout | null) {
    this.#inner = inner;
    this.#width = header.fields.length;
    this.#own = layout === null ? null : layout.headers.length;
    this.#header = layout === null ? header : { ...header, fields: [...layout.headers] };
  }

  get format(): SourceFormat {
    return this.#inner.format;
  }

  #strip(record: SourceRecord | undefined): SourceRecord | undefined {
    if (record === undefined || this.#own === null || record.fields.length !== this.#width) return record;
    const line = Number(record.fields[0]?.trim());
    return {
      ...record,
      fields: record.fields.slice(1, 1 + this.#own).map(fromSpreadsheetSafe),
      ...(Number.isSafeInteger(line) && line > 0 ? { templateLine: line } : {}),
    };
  }

  take(): SourceRecord | undefined {
    const header = this.#header;
    if (header !== undefined) {
      this.#header = undefined;
      return header;
    }
    return this.#strip(this.#inner.take());
  }

  async next(): Promise<SourceRecord | undefined> {
    return this.take() ?? this.#strip(await this.#inner.next());
  }

  /** Only a record that kept its cells is checked: the quote check compares it with the file's own header. */
  checkWidth(record: SourceRecord, width: number): void {
    this.#inner.checkWidth(record, this.#own === null ? width : this.#width);
  }

  /** A fix file's records are rebuilt from their cells: only records passed through unchanged may go unread. */
  skipUnread(unread: (line: number) => boolean): void {
    if (this.#own === null) this.#inner.skipUnread?.(unread);
  }

  planned(layout: HeaderLayout): void {
    this.#inner.planned?.(layout);
  }

  finish(): void {
    this.#inner.finish();
  }

  bytes(): { readonly bytesRead: number; readonly totalBytes: number } {
    return this.#inner.bytes();
  }

  close(): void {
    this.#inner.close();
  }
}

/**
 * `records` as the file a rejects CSV fixes when its header is the rejects layout (and that layout), else unchanged
 * (layout null). Reads the header record.
 */
export async function fixAwareRecords(records: RecordSource): Promise<{ records: RecordSource; layout: FixLayout | null }> {
  const header = records.take() ?? (await records.next());
  if (header === undefined) return { records, layout: null };
  const layout = recogniseRejectsHeader(header.fields);
  return { records: new FixRecords(records, header, layout), layout };
}
