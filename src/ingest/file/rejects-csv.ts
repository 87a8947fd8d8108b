/**
 * The rejects CSV, the one writer of it: `<name>.rejects.csv` next to a pushed file, and the file `push --dry-run`
 * writes. One line per row that was not written: `line`, the row's fields as they were in the file (a cleaned cell
 * is shown as it was: with its apostrophe, its null marker, its spaces), then `field`, `code`, `message` listing
 * every problem of the row, separated by "; " (the first problem first, in schema order).
 *
 * Layout: UTF-8 with a BOM and the source file's own delimiter, so that the spreadsheet the people who made the file
 * use opens it as they expect. A row with more fields than the header keeps them all: the extra ones go to columns
 * `extra_1`, `extra_2`, ... (nothing of a refused row is dropped from the report), so the header's width is the
 * widest reject's, known before the first line is written.
 *
 * Cells are written safe to open in a spreadsheet (issue 27, point 9): a cell a spreadsheet would take for a formula
 * gets a leading `'` (`spreadsheetSafe`), and a fix dropped again loses it (`fromSpreadsheetSafe`, read/fix-records.ts).
 *
 * Written through src/atomic-file.ts (temporary name, fsync, rename): a reader never sees half a rejects file.
 */
import { createReadStream } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { parse } from 'csv-parse/sync';
import { temporaryPath, writeFileAtomic } from '../../atomic-file.ts';
import { csvLine } from '../../csv-text.ts';

/** One problem of a row. */
export interface RejectProblem {
  readonly field: string | null;
  readonly code: string;
  readonly message: string;
}

/** One row that was not written. */
export interface RejectLine {
  /** 1-based line the row starts on in the source file. */
  readonly line: number;
  /** The row's fields as they were in the file. */
  readonly raw: readonly string[];
  /** Every problem of the row (at least one). */
  readonly errors: readonly RejectProblem[];
}

/**
 * Whether a spreadsheet could take `cell` for a formula (`=`, `+`, `-`, `@`, TAB, CR first: OWASP's CSV injection
 * list), or it is such a cell behind one of our apostrophes: escaping that one too keeps the rule reversible, so a
 * cell that really began with `'=` comes back as it was.
 */
function formulaLike(cell: string): boolean {
  let i = 0;
  while (cell.charCodeAt(i) === 0x27) i++;
  return i < cell.length && '=+-@\t\r'.includes(cell.charAt(i));
}

/**
 * A cell of the rejects CSV as written: a leading `'` before a cell a spreadsheet would run as a formula
 * (`=HYPERLINK(...)` in a price column must not become a link or a command on the desk of whoever opens the report).
 */
export function spreadsheetSafe(cell: string): string {
  return formulaLike(cell) ? `'${cell}` : cell;
}

/** The cell `spreadsheetSafe` was given, from what it wrote (a corrected rejects CSV dropped again). */
export function fromSpreadsheetSafe(cell: string): string {
  return cell.charCodeAt(0) === 0x27 && formulaLike(cell.slice(1)) ? cell.slice(1) : cell;
}

/** How the problems of a row read in the rejects CSV's last three columns. */
export function problemColumns(errors: readonly RejectProblem[]): [string, string, string] {
  const join = (values: string[]) => values.join('; ');
  return [join(errors.map((e) => e.field ?? '')), join(errors.map((e) => e.code)), join(errors.map((e) => e.message))];
}

export interface RejectsLayout {
  /** The source file's header cells. */
  readonly headers: readonly string[];
  /** The source file's delimiter. */
  readonly delimiter: string;
  /** The most fields any reject has (a row longer than the header). */
  readonly widest: number;
}

/** A rejects CSV's name: `<the file's name in archive/ or failed/>.rejects.csv`. */
export const REJECTS_SUFFIX = '.rejects.csv';

/** `prices.csv` for `prices.csv.rejects.csv` (any case); null for a name that is not a rejects file's. */
export function rejectsStem(name: string): string | null {
  if (!name.toLowerCase().endsWith(REJECTS_SUFFIX) || name.length === REJECTS_SUFFIX.length) return null;
  return name.slice(0, -REJECTS_SUFFIX.length);
}

/** The columns the agent adds around the file's own: `line` before them; `extra_N`, `field`, `code`, `message` after. */
export const REJECTS_LEAD_COLUMN = 'line';
export const REJECTS_TAIL_COLUMNS = ['field', 'code', 'message'] as const;
const extraColumn = (n: number) => `extra_${n}`;

/** The header of a rejects CSV: the agent's columns around the source file's own. */
export function rejectsHeader(headers: readonly string[], extras: number): string[] {
  return [REJECTS_LEAD_COLUMN, ...headers, ...Array.from({ length: extras }, (_, i) => extraColumn(i + 1)), ...REJECTS_TAIL_COLUMNS];
}

/** A rejects CSV's header, taken apart. */
export interface RecognisedRejectsHeader {
  /** The source file's own column names. */
  readonly headers: string[];
  /** How many `extra_N` columns follow them (fields of rows longer than the header). */
  readonly extras: number;
}

/**
 * Whether `cells` is the header of a rejects CSV the agent wrote (as `rejectsHeader` makes it), and the file's own
 * columns in it; null when it is not. Cells are compared trimmed, as a spreadsheet may have padded them.
 */
export function recogniseRejectsHeader(cells: readonly string[]): RecognisedRejectsHeader | null {
  const c = cells.map((cell) => fromSpreadsheetSafe(cell.trim()));
  const tail = c.slice(-REJECTS_TAIL_COLUMNS.length);
  if (c[0] !== REJECTS_LEAD_COLUMN || tail.join('\u0000') !== REJECTS_TAIL_COLUMNS.join('\u0000')) return null;
  const middle = c.slice(1, c.length - REJECTS_TAIL_COLUMNS.length);
  // extra_1 .. extra_k, in order, end the middle part; the file's own columns come before them.
  const first = middle.indexOf(extraColumn(1));
  const extras = first > 0 && middle.slice(first).every((h, i) => h === extraColumn(i + 1)) ? middle.length - first : 0;
  const headers = middle.slice(0, middle.length - extras);
  return headers.length === 0 ? null : { headers, extras };
}

const HEADER_READ_BYTES = 64 * 1024;

/**
 * The header of the rejects CSV at `path`, taken apart (for showing a reject's fields under their own column
 * names); null when the file is not a rejects CSV or cannot be read. The delimiter is the one after `line`.
 */
export async function readRejectsHeader(path: string): Promise<RecognisedRejectsHeader | null> {
  const handle = await open(path, 'r').catch(() => null);
  if (handle === null) return null;
  let text: string;
  try {
    const buffer = Buffer.alloc(HEADER_READ_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    text = buffer.subarray(0, bytesRead).toString('utf8').replace(/^\uFEFF/, '');
  } finally {
    await handle.close();
  }
  const delimiter = text.charAt(REJECTS_LEAD_COLUMN.length);
  if (!text.startsWith(REJECTS_LEAD_COLUMN) || ![',', ';', '\t', '|'].includes(delimiter)) return null;
  try {
    const records: string[][] = parse(text, { delimiter, to: 1, relax_column_count: true });
    const first = records[0];
    return first === undefined ? null : recogniseRejectsHeader(first);
  } catch {
    return null; // a header longer than what was read, or not CSV after all
  }
}

async function* lines(layout: RejectsLayout, rejects: Iterable<RejectLine> | AsyncIterable<RejectLine>): AsyncGenerator<string> {
  const { headers, delimiter } = layout;
  const width = Math.max(headers.length, layout.widest);
  const line = (cells: readonly string[]) => csvLine(cells.map(spreadsheetSafe), delimiter);
  yield `\uFEFF${line(rejectsHeader(headers, width - headers.length))}`;
  for await (const r of rejects) {
    const fields = Array.from({ length: width }, (_, i) => r.raw[i] ?? '');
    yield line([String(r.line), ...fields, ...problemColumns(r.errors)]);
  }
}

/** Streams `rejects` (in line order) to `path` durably, in constant memory (a file can have millions). */
export async function writeRejectsCsv(path: string, layout: RejectsLayout, rejects: Iterable<RejectLine> | AsyncIterable<RejectLine>): Promise<void> {
  await writeFileAtomic(path, lines(layout, rejects));
}

/**
 * Rejects found while a file is read, before the widest is known (`push --dry-run`, which records nothing in the
 * state database): kept as JSON lines in a temporary file next to the target, then written out in one pass by
 * `writeTo`. Memory stays constant whatever the number of rejects.
 */
export class RejectsSpool {
  readonly #path: string;
  #handle: FileHandle | null = null;
  #buffer = '';
  #count = 0;
  #widest = 0;

  constructor(target: string) {
    this.#path = temporaryPath(`${target}.spool`);
  }

  get count(): number {
    return this.#count;
  }

  async add(reject: RejectLine): Promise<void> {
    this.#handle ??= await open(this.#path, 'wx', 0o600);
    this.#count += 1;
    this.#widest = Math.max(this.#widest, reject.raw.length);
    this.#buffer += `${JSON.stringify(reject)}\n`;
    if (this.#buffer.length >= 64 * 1024) await this.#flush();
  }

  /** Writes the rejects CSV at `path` (when there was a reject) and removes the spool. */
  async writeTo(path: string, layout: Omit<RejectsLayout, 'widest'>): Promise<void> {
    try {
      if (this.#handle === null) return;
      await this.#flush();
      await this.#handle.close();
      this.#handle = null;
      await writeRejectsCsv(path, { ...layout, widest: this.#widest }, this.#read());
    } finally {
      await this.discard();
    }
  }

  /** Removes the spool; safe more than once. */
  async discard(): Promise<void> {
    await this.#handle?.close().catch(() => undefined);
    this.#handle = null;
    await rm(this.#path, { force: true });
  }

  async #flush(): Promise<void> {
    if (this.#buffer === '' || this.#handle === null) return;
    const text = this.#buffer;
    this.#buffer = '';
    await this.#handle.write(text);
  }

  async *#read(): AsyncGenerator<RejectLine> {
    const input = createInterface({ input: createReadStream(this.#path, 'utf8'), crlfDelay: Infinity });
    for await (const text of input) yield JSON.parse(text) as RejectLine;
  }
}
