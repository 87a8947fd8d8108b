/**
 * The rejects CSV, the one writer of it: `<name>.rejects.csv` next to a pushed file, and the file `push --dry-run`
 * writes. Every row that was not written: `line`, the row's fields as they were in the file, `field`, `code`,
 * `message`.
 *
 * Layout: UTF-8 with a BOM and the source file's own delimiter, so that the spreadsheet the people who made the file
 * use opens it as they expect. A row with more fields than the header keeps them all: the extra ones go to columns
 * `extra_1`, `extra_2`, ... (nothing of a refused row is dropped from the report), so the header's width is the
 * widest reject's, known before the first line is written.
 *
 * Written through src/atomic-file.ts (temporary name, fsync, rename): a reader never sees half a rejects file.
 */
import { createReadStream } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { temporaryPath, writeFileAtomic } from '../atomic-file.ts';
import { csvLine } from '../csv-text.ts';

/** One row that was not written. */
export interface RejectLine {
  /** 1-based line the row starts on in the source file. */
  readonly line: number;
  /** The row's fields as they were in the file. */
  readonly raw: readonly string[];
  readonly field: string | null;
  readonly code: string;
  readonly message: string;
}

export interface RejectsLayout {
  /** The source file's header cells. */
  readonly headers: readonly string[];
  /** The source file's delimiter. */
  readonly delimiter: string;
  /** The most fields any reject has (a row longer than the header). */
  readonly widest: number;
}

async function* lines(layout: RejectsLayout, rejects: Iterable<RejectLine> | AsyncIterable<RejectLine>): AsyncGenerator<string> {
  const { headers, delimiter } = layout;
  const width = Math.max(headers.length, layout.widest);
  const extras = Array.from({ length: width - headers.length }, (_, i) => `extra_${i + 1}`);
  yield `\uFEFF${csvLine(['line', ...headers, ...extras, 'field', 'code', 'message'], delimiter)}`;
  for await (const r of rejects) {
    const fields = Array.from({ length: width }, (_, i) => r.raw[i] ?? '');
    yield csvLine([String(r.line), ...fields, r.field ?? '', r.code, r.message], delimiter);
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
