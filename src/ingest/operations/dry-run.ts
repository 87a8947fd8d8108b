/**
 * `push --dry-run`: reads, maps and validates a file exactly as a push would (the same reader, mapping and schemas),
 * writes the rows that would be rejected to a rejects CSV and counts the rows that would be sent. It claims nothing,
 * records nothing in the state database and calls no API endpoint: the file stays where it is.
 *
 * The rejects CSV is written by the push's own writer (src/ingest/file/rejects-csv.ts): the same layout, durably, in
 * constant memory.
 */
import { mkdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { BUSINESS_KEYS, type Entity } from '../../api/schemas/index.ts';
import { FileKeys, loserRow, type Loser } from '../file/duplicate-keys.ts';
import { readRows, type CompiledSource, type ReadProgress, type ReadSummary } from '../read/index.ts';
import { RejectsSpool } from '../file/rejects-csv.ts';
import { rowsVerdict } from '../file/row-fate.ts';
import { previewDelta, type DeltaPreview, type DeltaSource } from '../delta/delta-plan.ts';
import type { StateDb } from '../../store/state-db.ts';
import { PushFileMissingError, PushUsageError } from './push-target.ts';

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
  /** Valid rows the push would not send because another row of the file has the same key (duplicate-keys.ts). */
  readonly superseded: number;
  /** Valid rows `duplicate_keys: sum` would add up into another row of their key. */
  readonly merged: number;
  /** Valid rows `duplicate_keys: reject` (or `sum`, for rows that disagree) would reject for their repeated key. */
  readonly duplicates: number;
  /** Rows rejected in all: invalid ones and duplicates. */
  readonly rejected: number;
  readonly wouldSend: number;
  readonly rejectsPath: string | null;
  /** Why the push would fail the file for its rows (row-fate.ts), if it would, assuming the API accepts what is sent. */
  readonly failure: { readonly code: string; readonly message: string } | null;
}

/** The rows that would not count for their key: a first pass over the file, as the push makes it. */
async function losersOf(input: DryRunInput): Promise<ReadonlyMap<number, Loser>> {
  const keyOf = BUSINESS_KEYS[input.entity];
  const keys = new FileKeys();
  try {
    const reader = await readRows(input.file, { ...input.read, entity: input.entity });
    try {
      const sum = input.read.duplicateKeys === 'sum';
      for await (const outcome of reader) if (outcome.kind === 'row') keys.add(keyOf(outcome.record), outcome.line, sum ? outcome.record : undefined);
    } finally {
      reader.close();
    }
    return keys.decide(input.read.duplicateKeys).losers;
  } finally {
    keys.close();
  }
}

/** Throws the reader's FileFormatError for a file a push would fail as a whole. */
export async function dryRun(input: DryRunInput): Promise<DryRunResult> {
  await checkPaths(input.file, input.rejectsPath);
  let delta: DeltaPreview | null = null;
  if (input.delta !== undefined) {
    const first = await readRows(input.file, { ...input.read, entity: input.entity }, { unvalidated: true });
    try {
      delta = await previewDelta(input.delta.db, input.delta.source, first, { full: input.delta.full, scratchDir: input.delta.scratchDir, now: input.delta.now });
    } finally {
      first.close();
    }
  }
  const losers = await losersOf(input);
  const reader = await readRows(input.file, { ...input.read, entity: input.entity });
  await mkdir(dirname(input.rejectsPath), { recursive: true, mode: 0o750 });
  const rejects = new RejectsSpool(input.rejectsPath);
  const progress = input.onProgress ? setInterval(() => input.onProgress?.(reader.progress()), 200) : null;
  let superseded = 0;
  let merged = 0;
  let duplicates = 0;
  try {
    for await (const outcome of reader) {
      if (outcome.kind === 'reject') {
        await rejects.add({ line: outcome.line, raw: outcome.rawFields, errors: outcome.errors });
        continue;
      }
      const loser = losers.get(outcome.line);
      if (loser === undefined) continue;
      if (loser.fate === 'superseded') superseded += 1;
      if (loser.fate === 'merged') merged += 1;
      if (loser.fate !== 'rejected') continue;
      duplicates += 1;
      const { field, code, message } = loserRow(input.entity, outcome.line, loser, outcome.rawFields);
      await rejects.add({ line: outcome.line, raw: outcome.rawFields, errors: [{ field, code, message }] });
    }
    await rejects.writeTo(input.rejectsPath, { headers: reader.header.headers, delimiter: reader.header.delimiter });
  } finally {
    if (progress) clearInterval(progress);
    reader.close();
    await rejects.discard();
  }
  const summary = reader.summary();
  input.onProgress?.(summary);
  // A delta source's unchanged rows are valid rows (each was accepted as it is): not sent.
  const wouldSend = summary.accepted - superseded - merged - duplicates - (delta?.unchanged ?? 0);
  const rejected = summary.rejected + duplicates;
  const counts = { batches: 0, sent: wouldSend, accepted: wouldSend, rejectedByApi: 0, rejectedLocally: rejected, superseded, merged, unchanged: delta?.unchanged ?? 0, rejectsListed: rejected };
  const verdict = rowsVerdict(counts, summary.rows, summary.skipped, input.read.rejectThreshold);
  return {
    summary,
    delta,
    superseded,
    merged,
    duplicates,
    rejected,
    wouldSend,
    rejectsPath: rejects.count === 0 ? null : input.rejectsPath,
    failure: verdict === null ? null : { code: verdict.code, message: verdict.message },
  };
}

/**
 * Refuses, before anything is read or written, a file that is not there and a rejects path that is the file itself:
 * `--rejects export.csv export.csv` replaced the user's export with its rejects.
 */
async function checkPaths(file: string, rejectsPath: string): Promise<void> {
  const input = await stat(file).catch(() => null);
  if (input === null || !input.isFile()) throw new PushFileMissingError(`${file}: no such file`);
  const rejects = await stat(rejectsPath).catch(() => null);
  if (rejectsPath === file || (rejects !== null && rejects.dev === input.dev && rejects.ino === input.ino)) {
    throw new PushUsageError(`--rejects names the file being checked (${file}): give another file for its rejects`);
  }
  if (rejects?.isDirectory() === true) throw new PushUsageError(`--rejects names a folder (${rejectsPath}): give a file name for the rejects CSV`);
}
