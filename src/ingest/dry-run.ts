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
import { FileKeys, supersededInBatch, supersedesDuplicates } from './duplicate-keys.ts';
import { readRows, type CompiledSource, type ReadProgress, type ReadSummary } from './read/index.ts';
import { RejectsSpool } from './rejects-csv.ts';
import { previewDelta, type DeltaPreview, type DeltaSource } from './delta/delta-plan.ts';
import type { StateDb } from '../store/state-db.ts';

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
  /** A delta source: the file is compared with the state (read-only) as a push would compare it now. */
  readonly delta?: DryRunDelta | undefined;
}

export interface DryRunDelta {
  /** The state database opened read-only, or null when there is none yet. */
  readonly db: StateDb | null;
  readonly source: DeltaSource;
  /** `push --dry-run --full`. */
  readonly full: boolean;
  /** Where the comparison's sorted runs go (removed afterwards). */
  readonly scratchDir: string;
  readonly now: number;
}

export interface DryRunResult {
  readonly summary: ReadSummary;
  /** The comparison with what the source sent before (delta sources), with the brakes it would trip. */
  readonly delta: DeltaPreview | null;
  /** Valid rows the push would not send because a later row has the same key (duplicate-keys.ts). */
  readonly superseded: number;
  readonly wouldSend: number;
  readonly rejectsPath: string | null;
}

/**
 * Counts the valid rows a push in `mode` would supersede, by the push's own rule (duplicate-keys.ts): in bulk mode
 * per batch of `batchSize` valid rows, cut as the push cuts them; in import mode over the whole file.
 */
class SupersedeCounter {
  readonly #batchSize: number;
  readonly #batch: string[] = [];
  readonly #file: FileKeys | null;
  #superseded = 0;

  constructor(mode: 'bulk' | 'import', batchSize: number) {
    this.#batchSize = batchSize;
    this.#file = mode === 'import' ? new FileKeys() : null;
  }

  add(key: string, line: number): void {
    if (this.#file !== null) {
      this.#file.add(key, line);
      return;
    }
    this.#batch.push(key);
    if (this.#batch.length >= this.#batchSize) this.#endBatch();
  }

  /** Valid rows superseded in the whole file. */
  finish(): number {
    if (this.#file !== null) this.#superseded = this.#file.superseded().size;
    else this.#endBatch();
    return this.#superseded;
  }

  close(): void {
    this.#file?.close();
  }

  #endBatch(): void {
    this.#superseded += supersededInBatch(this.#batch).size;
    this.#batch.length = 0;
  }
}

/** Throws the reader's FileFormatError for a file a push would fail as a whole. */
export async function dryRun(input: DryRunInput): Promise<DryRunResult> {
  let delta: DeltaPreview | null = null;
  if (input.delta !== undefined) {
    const first = await readRows(input.file, { ...input.read, entity: input.entity }, { unvalidated: true });
    try {
      delta = await previewDelta(input.delta.db, input.delta.source, first, { full: input.delta.full, scratchDir: input.delta.scratchDir, now: input.delta.now });
    } finally {
      first.close();
    }
  }
  const reader = await readRows(input.file, { ...input.read, entity: input.entity });
  const counter = supersedesDuplicates(input.entity) ? new SupersedeCounter(input.mode, input.batchSize) : null;
  const keyOf = BUSINESS_KEYS[input.entity];
  await mkdir(dirname(input.rejectsPath), { recursive: true, mode: 0o750 });
  const rejects = new RejectsSpool(input.rejectsPath);
  const progress = input.onProgress ? setInterval(() => input.onProgress?.(reader.progress()), 200) : null;
  let superseded: number;
  try {
    for await (const outcome of reader) {
      if (outcome.kind === 'row') counter?.add(keyOf(outcome.record), outcome.line);
      else await rejects.add({ line: outcome.line, raw: outcome.rawFields, field: outcome.field, code: outcome.code, message: outcome.message });
    }
    superseded = counter?.finish() ?? 0;
    await rejects.writeTo(input.rejectsPath, { headers: reader.header.headers, delimiter: reader.header.delimiter });
  } finally {
    if (progress) clearInterval(progress);
    reader.close();
    counter?.close();
    await rejects.discard();
  }
  const summary = reader.summary();
  input.onProgress?.(summary);
  const rejectsPath = rejects.count === 0 ? null : input.rejectsPath;
  // A delta source's unchanged rows are valid rows (each was accepted as it is): not sent.
  return { summary, delta, superseded, wouldSend: summary.accepted - superseded - (delta?.unchanged ?? 0), rejectsPath };
}
