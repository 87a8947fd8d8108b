/**
 * The canonical CSV of import mode: the mapped, validated rows of one source file, in the form the API's
 * import endpoints take. UTF-8 without BOM, `,` between fields, CRLF between records, the agent's one quoting rule
 * (src/csv-text.ts); an empty field means "not set".
 *
 * Header: the entity's API field names in schema order; for products followed by the custom columns. Those
 * must be known before the first row (the reader's `header.customColumns` is, once the source header is read):
 * a record carrying a key outside the header throws instead of being written without it.
 *
 * Durability: rows go to a dot-named temporary file next to the target (watchers ignore dot-files); `commit`
 * flushes and makes it durable under its final name (src/atomic-file.ts: fsync, rename, directory fsync). A crash
 * before the rename leaves at most a stray temporary file and never a truncated file under the final name.
 */
import { open, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { commitFile, temporaryPath } from '../../atomic-file.ts';
import { csvField } from '../../csv-text.ts';
import type { Entity } from '../../api/schemas/index.ts';
import { ENTITY_FIELDS } from '../read/field-kinds.ts';
import type { EntityRecord } from '../read/field-kinds.ts';

/** Buffered text is written out once it passes this size. */
const FLUSH_BYTES = 64 * 1024; // 64 KiB
const EOL = '\r\n';
const LINE_BREAK = /[\r\n]/;

export interface CanonicalCsvOptions {
  readonly entity: Entity;
  /** Products only: custom columns, after the canonical fields. */
  readonly customColumns?: readonly string[];
}

/** Where a record landed in the canonical file (1-based physical lines; the header is line 1). */
export interface WrittenRecord {
  readonly line: number;
  /** Differs from `line` when a value holds line breaks. */
  readonly endLine: number;
}

export interface CommittedCsv {
  readonly path: string;
  readonly rows: number;
  readonly bytes: number;
}

/** The canonical header of an entity; throws on custom columns that repeat or shadow a canonical field, ignoring case. */
export function canonicalColumns(options: CanonicalCsvOptions): string[] {
  const canonical = ENTITY_FIELDS[options.entity].map((f) => f.name);
  const custom = options.customColumns ?? [];
  if (custom.length > 0 && options.entity !== 'products') {
    throw new Error(`${options.entity} has no custom columns (got ${custom.join(', ')})`);
  }
  const columns = [...canonical, ...custom];
  // Ignoring case: the server does (header.ts renames a custom column that repeats a name but for case).
  const seen = new Set<string>();
  for (const column of columns) {
    if (column === '' || seen.has(column.toLowerCase())) throw new Error(`invalid or repeated column ${JSON.stringify(column)}`);
    seen.add(column.toLowerCase());
  }
  return columns;
}

function field(value: unknown, column: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return csvField(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new TypeError(`${column}: cannot write a ${typeof value} to CSV`);
}

function lineBreaks(text: string): number {
  return text.match(/\r\n|\r|\n/g)?.length ?? 0;
}

export class CanonicalCsvWriter {
  readonly columns: readonly string[];
  readonly path: string;
  private readonly tempPath: string;
  private readonly handle: FileHandle;
  private readonly known: ReadonlySet<string>;
  private buffer = '';
  private bytes = 0;
  private rows = 0;
  private line = 1;
  private state: 'open' | 'committed' | 'aborted' = 'open';

  private constructor(path: string, tempPath: string, handle: FileHandle, columns: readonly string[]) {
    this.path = path;
    this.tempPath = tempPath;
    this.handle = handle;
    this.columns = columns;
    this.known = new Set(columns);
    this.buffer = columns.map((c) => field(c, c)).join(',') + EOL;
  }

  /** Opens the temporary file next to `path` and buffers the header. */
  static async create(path: string, options: CanonicalCsvOptions): Promise<CanonicalCsvWriter> {
    const columns = canonicalColumns(options);
    const tempPath = temporaryPath(path);
    const handle = await open(tempPath, 'wx');
    return new CanonicalCsvWriter(path, tempPath, handle, columns);
  }

  /** Appends one record; resolves once it is buffered (writing to disk when the buffer is full). */
  async write(record: EntityRecord): Promise<WrittenRecord> {
    if (this.state !== 'open') throw new Error(`the canonical CSV is ${this.state}`);
    const values = record as Readonly<Record<string, unknown>>;
    for (const key of Object.keys(values)) {
      if (!this.known.has(key)) throw new Error(`${key} is not a column of this canonical CSV`);
    }
    const text = this.columns.map((column) => field(values[column], column)).join(',');
    const line = this.line + 1;
    this.line = line + (LINE_BREAK.test(text) ? lineBreaks(text) : 0);
    this.buffer += text + EOL;
    this.rows++;
    if (this.buffer.length >= FLUSH_BYTES) await this.flush();
    return { line, endLine: this.line };
  }

  /** Flushes, fsyncs and renames the file into place. */
  async commit(): Promise<CommittedCsv> {
    if (this.state !== 'open') throw new Error(`the canonical CSV is ${this.state}`);
    try {
      await this.flush();
      await commitFile(this.tempPath, this.path, this.handle);
    } catch (error) {
      await this.abort();
      throw error;
    }
    this.state = 'committed';
    return { path: this.path, rows: this.rows, bytes: this.bytes };
  }

  /** Drops the temporary file; safe after a failed commit and more than once. */
  async abort(): Promise<void> {
    if (this.state === 'committed') return;
    this.state = 'aborted';
    await this.handle.close().catch(() => undefined);
    await rm(this.tempPath, { force: true });
  }

  private async flush(): Promise<void> {
    if (this.buffer === '') return;
    const chunk = Buffer.from(this.buffer, 'utf8');
    this.buffer = '';
    await this.handle.write(chunk);
    this.bytes += chunk.length;
  }
}

/** Writes all `records` to `path` as a canonical CSV (temp file, fsync, rename). */
export async function writeCanonicalCsv(
  records: AsyncIterable<EntityRecord> | Iterable<EntityRecord>,
  path: string,
  options: CanonicalCsvOptions,
): Promise<CommittedCsv> {
  const writer = await CanonicalCsvWriter.create(path, options);
  try {
    for await (const record of records) await writer.write(record);
  } catch (error) {
    await writer.abort();
    throw error;
  }
  return writer.commit();
}
