/**
 * `push --dry-run`: reads, maps and validates a file exactly as a push would (the same reader, mapping and schemas),
 * writes the rows that would be rejected to a rejects CSV and counts the rows that would be sent. It claims nothing,
 * records nothing in the state database and calls no API endpoint: the file stays where it is.
 *
 * The rejects CSV is written by the push's own writer (src/ingest/rejects-csv.ts): the same layout, durably, in
 * constant memory.
 */
import { mkdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { BUSINESS_KEYS, type Entity } from '../api/schemas/index.ts';
import { readRows, type CompiledSource, type ReadProgress, type ReadSummary } from './read/index.ts';
import { RejectsSpool } from './rejects-csv.ts';

/** Where a dry run writes its rejects unless told: the state directory, never an inbox (a watcher would take a .csv). */
export function dryRunRejectsPath(stateDir: string, file: string): string {
  return join(stateDir, 'push', 'dry-run', `${basename(file)}.rejects.csv`);
}

export interface DryRunInput {
  readonly file: string;
  readonly read: CompiledSource;
  readonly entity: Entity;
  readonly mode: 'bulk' | 'import';
  readonly batchSize: number;
  /** Where the rejects CSV goes (only written when a row is rejected). */
  readonly rejectsPath: string;
  readonly onProgress?: (sample: ReadProgress) => void;
}

export interface DryRunResult {
  readonly summary: ReadSummary;
  /** Valid rows that a bulk push would drop for a later row with the same key in the same batch. */
  readonly superseded: number;
  readonly wouldSend: number;
  readonly rejectsPath: string | null;
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
  const counter = input.mode === 'bulk' && input.entity === 'product_store' ? new SupersedeCounter(input.batchSize) : null;
  const keyOf = BUSINESS_KEYS[input.entity];
  await mkdir(dirname(input.rejectsPath), { recursive: true, mode: 0o750 });
  const rejects = new RejectsSpool(input.rejectsPath);
  const progress = input.onProgress ? setInterval(() => input.onProgress?.(reader.progress()), 200) : null;
  try {
    for await (const outcome of reader) {
      if (outcome.kind === 'row') counter?.add(keyOf(outcome.record));
      else await rejects.add({ line: outcome.line, raw: outcome.rawFields, field: outcome.field, code: outcome.code, message: outcome.message });
    }
    counter?.flush();
    await rejects.writeTo(input.rejectsPath, { headers: reader.header.headers, delimiter: reader.header.delimiter });
  } finally {
    if (progress) clearInterval(progress);
    reader.close();
    await rejects.discard();
  }
  const summary = reader.summary();
  input.onProgress?.(summary);
  const superseded = counter?.superseded ?? 0;
  return { summary, superseded, wouldSend: summary.accepted - superseded, rejectsPath: rejects.count === 0 ? null : input.rejectsPath };
}
