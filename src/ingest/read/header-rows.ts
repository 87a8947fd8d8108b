/**
 * Where a file's header is, for every record source alike (CSV, its fast lane, workbooks): files saved from a
 * spreadsheet carry a letterhead above the table, and a header spread over two rows.
 *
 * - `header_row: N`: the header starts on line N (a workbook: row N); `header_rows: 2` joins that row's cells with
 *   the next one's, column by column, with a space (`Preis` over `netto` is `Preis netto`; an empty cell adds
 *   nothing).
 * - Without `header_row`: line 1, as always, when it names a column the mapping reads; else the first of the first
 *   HEADER_SEARCH_LINES lines that names one; else line 1 again, so that the header plan says what is missing.
 * - Lines above the header are not data: each non-blank one is a skipped row (counted, never rejected), blank ones
 *   are blank lines.
 * - A corrected rejects CSV dropped back (fix-records.ts) has its header on line 1, whatever the source says.
 */
import type { CompiledSource } from './compile-source.ts';
import { FileFormatError } from './errors.ts';
import { isBlank } from './parser.ts';
import type { RecordSource, SourceRecord } from './record-source.ts';

/** How far down the header is looked for when line 1 is not it. */
export const HEADER_SEARCH_LINES = 50;

export interface LocatedHeader {
  /** The header's cells (joined, for several rows). */
  readonly fields: string[];
  /** The line the header starts on. */
  readonly line: number;
  /** The line it ends on. */
  readonly endLine: number;
  /** Records above the header with content (skipped rows), and blank ones. */
  readonly skippedAbove: number;
  readonly blankAbove: number;
  /** Records read past the header while looking for it: the first rows, to be read again. */
  readonly readAhead: SourceRecord[];
}

/** The column names a header must hold one of to be the header: those the mapping reads, by name. */
export function namesRead(compiled: CompiledSource): Set<string> {
  const names = new Set<string>();
  for (const refs of compiled.columns.values()) {
    for (const ref of refs) {
      if (ref.kind === 'column') names.add(ref.header);
      else for (const part of ref.parts) if ('column' in part) names.add(part.column);
    }
  }
  for (const field of compiled.fields) if (!compiled.columns.has(field.name)) names.add(field.name);
  return names;
}

/** The cells of `rows` joined column by column with a space (empty cells add nothing). */
export function joinHeaderRows(rows: readonly (readonly string[])[]): string[] {
  const width = Math.max(...rows.map((r) => r.length));
  return Array.from({ length: width }, (_, i) =>
    rows
      .map((r) => (r[i] ?? '').trim())
      .filter((cell) => cell !== '')
      .join(' '),
  );
}

/**
 * Reads records up to and including the header. `fixFile`: a corrected rejects CSV (its header is line 1). Throws
 * HEADER_NOT_FOUND when `header_row` names a line the file does not start a record on; null for a file without records.
 */
export async function locateHeader(records: RecordSource, compiled: CompiledSource, file: string, fixFile: boolean): Promise<LocatedHeader | null> {
  const read: SourceRecord[] = [];
  const next = async (): Promise<SourceRecord | undefined> => records.take() ?? (await records.next());
  const rows = fixFile ? 1 : compiled.headerRows;
  const located = (at: number): LocatedHeader => {
    const header = read.slice(at, at + rows);
    const above = read.slice(0, at);
    const blankAbove = above.filter((r) => isBlank(r.fields)).length;
    return {
      fields: rows === 1 ? (header[0] as SourceRecord).fields : joinHeaderRows(header.map((r) => r.fields)),
      line: (header[0] as SourceRecord).line,
      endLine: (header.at(-1) as SourceRecord).endLine,
      skippedAbove: above.length - blankAbove,
      blankAbove,
      readAhead: read.slice(at + rows),
    };
  };
  /** Reads until `count` records are read, or the file ends. */
  const ensure = async (count: number): Promise<void> => {
    while (read.length < count) {
      const record = await next();
      if (record === undefined) return;
      read.push(record);
    }
  };

  const wanted = fixFile ? undefined : compiled.headerRow;
  if (wanted !== undefined) {
    for (;;) {
      const record = await next();
      if (record === undefined || record.line > wanted) {
        throw new FileFormatError('HEADER_NOT_FOUND', `header_row is ${wanted}, but no row starts on line ${wanted} of the file (it is blank, inside a quoted cell, or past the end): check header_row`, { file, line: wanted });
      }
      read.push(record);
      if (record.line === wanted) break;
    }
    if (isBlank(read.at(-1)?.fields ?? [])) {
      throw new FileFormatError('HEADER_NOT_FOUND', `header_row is ${wanted}, but line ${wanted} is blank: check header_row`, { file, line: wanted });
    }
    const at = read.length - 1;
    await ensure(at + rows);
    return located(at);
  }

  const names = namesRead(compiled);
  const namesAt = (at: number) => joinHeaderRows(read.slice(at, at + rows).map((r) => r.fields)).some((cell) => names.has(cell));
  for (let at = 0; ; at++) {
    await ensure(at + rows);
    const record = read[at];
    if (record === undefined) break;
    if (at === 0 && fixFile) return located(0);
    if (record.line > HEADER_SEARCH_LINES) break;
    if (!isBlank(record.fields) && namesAt(at)) return located(at);
  }
  // No line names a column the mapping reads: line 1 is planned as the header, and the plan says what is missing.
  return read.length === 0 ? null : located(0);
}
