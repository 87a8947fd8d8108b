/**
 * `push --dry-run`: reads, maps and validates a file exactly as a push would (the same reader, mapping and schemas),
 * writes the rows that would be rejected to a rejects CSV and counts the rows that would be sent. It claims nothing,
 * records nothing in the state database and calls no API endpoint: the file stays where it is.
 *
 * The rejects CSV has the layout of a push's `<name>.rejects.csv` (UTF-8 BOM, the file's delimiter, `line`, the
 * original fields, `field`, `code`, `message`), written through a temporary name and renamed, in constant memory.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { once } from 'node:events';
import { BUSINESS_KEYS, type Entity } from '../api/schemas/index.ts';
import { csvLine } from '../csv-text.ts';
import { readRows, type CompiledSource, type ReadSummary } from '../ingest/read/index.ts';
import type { ProgressSample } from './progress.ts';

export interface DryRunInput {
  readonly file: string;
  readonly read: CompiledSource;
  readonly entity: Entity;
  readonly mode: 'bulk' | 'import';
  readonly batchSize: number;
  /** Where the rejects CSV goes (only written when a row is rejected). */
  readonly rejectsPath: string;
  readonly onProgress?: (sample: ProgressSample) => void;
}

export interface DryRunResult {
  readonly summary: ReadSummary;
  /** Valid rows that a bulk push would drop for a later row with the same key in the same batch. */
  readonly superseded: number;
  readonly wouldSend: number;
  readonly rejectsPath: string | null;
}

/** Appends lines to a file, waiting for the stream to drain: constant memory whatever the number of rejects. */
class LineFile {
  readonly #out;
  readonly temp: string;

  constructor(temp: string) {
    this.temp = temp;
    this.#out = createWriteStream(temp, { mode: 0o640 });
  }

  async write(line: string): Promise<void> {
    if (!this.#out.write(line)) await once(this.#out, 'drain');
  }

  async close(): Promise<void> {
    this.#out.end();
    await once(this.#out, 'finish');
  }

  destroy(): void {
    this.#out.destroy();
  }
}

/**
 * Counts, per bulk batch of `batchSize` valid rows, the rows whose product_store key comes again later in the same
 * batch: the push sends only the later one (src/ingest/bulk-send.ts, supersedeDuplicates).
 */
class SupersedeCounter {
  readonly #keys = new Set<string>();
  readonly #batchSize: number;
  #rows = 0;
  superseded = 0;

  constructor(batchSize: number) {
    this.#batchSize = batchSize;
  }

  add(key: string): void {
    this.#keys.add(key);
    this.#rows += 1;
    if (this.#rows === this.#batchSize) this.flush();
  }

  flush(): void {
    this.superseded += this.#rows - this.#keys.size;
    this.#keys.clear();
    this.#rows = 0;
  }
}

/** Throws the reader's FileFormatError for a file a push would fail as a whole. */
export async function dryRun(input: DryRunInput): Promise<DryRunResult> {
  const reader = await readRows(input.file, { ...input.read, entity: input.entity });
  const delimiter = reader.header.delimiter;
  const headers = reader.header.headers;
  const counter = input.mode === 'bulk' && input.entity === 'product_store' ? new SupersedeCounter(input.batchSize) : null;
  const keyOf = BUSINESS_KEYS[input.entity];
  let rejects: LineFile | null = null;
  const progress = input.onProgress ? setInterval(() => input.onProgress?.(reader.progress()), 200) : null;
  try {
    for await (const outcome of reader) {
      if (outcome.kind === 'row') {
        counter?.add(keyOf(outcome.record));
        continue;
      }
      if (rejects === null) {
        await mkdir(dirname(input.rejectsPath), { recursive: true, mode: 0o750 });
        rejects = new LineFile(`${input.rejectsPath}.tmp-${process.pid}`);
        await rejects.write(`\uFEFF${csvLine(['line', ...headers, 'field', 'code', 'message'], delimiter)}`);
      }
      const fields = headers.map((_, i) => outcome.rawFields[i] ?? '');
      await rejects.write(csvLine([String(outcome.line), ...fields, outcome.field ?? '', outcome.code, outcome.message], delimiter));
    }
    counter?.flush();
    if (rejects !== null) {
      await rejects.close();
      await rename(rejects.temp, input.rejectsPath);
    }
  } catch (error) {
    if (rejects !== null) {
      rejects.destroy();
      await rm(rejects.temp, { force: true });
    }
    throw error;
  } finally {
    if (progress) clearInterval(progress);
    reader.close();
  }
  const summary = reader.summary();
  input.onProgress?.(summary);
  const superseded = counter?.superseded ?? 0;
  return { summary, superseded, wouldSend: summary.accepted - superseded, rejectsPath: rejects === null ? null : input.rejectsPath };
}
