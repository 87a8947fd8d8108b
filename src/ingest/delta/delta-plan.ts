/**
 * Delta push of one claimed file, before anything is sent: compare the file with what its source sent before
 * (compare.ts), decide whether this file is sent in full, judge the brakes, and hand the send pass (bulk-send.ts) the
 * fate of each row and what to remember once the API accepted it.
 *
 * A full send (every row sent, whatever the comparison says) happens for `push --full`, when the source's last full
 * send is older than `delta.full_every`, and for a source's first file. The comparison still runs then: its counts
 * are reported and braked on, and the rows the API accepts are remembered as always.
 *
 * What survives a crash: nothing here writes the state but the scope's fingerprint and the file's delta record (its
 * mode, counts and brake verdict, written before the first batch goes). A resumed file is compared again: rows
 * within the earlier attempt's committed batches (accepted, refused or counted unchanged) are neither sent nor counted
 * again, whatever they compare as now; the brakes, passed once, are not judged again; a full send stays full.
 *
 * This module is delta/'s entry: the rest of ingest/ and the other rooms import delta only from here (eslint.config.js
 * enforces it), so the comparison, the threads and the machinery of delta/fast/ can change behind it.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { join } from 'node:path';
import { BUSINESS_KEY_FIELDS, BUSINESS_KEYS, type Entity } from '../../api/schemas/index.ts';
import type { Clock } from '../../clock.ts';
import type { DeltaSettings } from '../../config/delta-schema.ts';
import type { DuplicateKeyPolicy } from '../../config/mapping-schema.ts';
import { csvLine } from '../../csv-text.ts';
import {
  deltaFile,
  deltaScope,
  findScope,
  rememberAccepted,
  saveDeltaFile,
  setLineFailedSeed,
  takeRelease,
  useFingerprint,
  type DeltaScope,
  type TxStep,
} from '../../store/delta-state.ts';
import { committedSpans, inSpans, type PushFile } from '../../store/push-ledger.ts';
import type { StateDb } from '../../store/state-db.ts';
import { processingDir } from '../folders.ts';
import type { RowReader } from '../read/index.ts';
import { priceOf, sortedFields } from './fast/canonical.ts';
import { compareFile, storedContent, storedKeyHash, type Comparison, type FirstPass, type LineMode, type MissingKey } from './compare.ts';
import { lineHashOf, seedId } from './fast/line-hash.ts';
import { trippedBrakes, type TrippedBrake } from './brakes.ts';
import { sourceFingerprint } from './fingerprint.ts';
import { VERDICT, type LineCount } from './verdicts.ts';
import type { Deletion } from './delete-missing.ts';
import { markPlatformChanges } from './platform-changes.ts';

// What the file pipeline, the send pass and the operations use of delta/ besides planDelta and previewDelta.
export { sourceDelta, entityDelta } from './source-delta.ts';
export { sourceFingerprint } from './fingerprint.ts';
export { recordHeld, releaseCommand, writeHeldPreview, previewPathOf, type HeldPreview } from './hold.ts';
export { deleteMissing } from './delete-missing.ts';
export { firstPass, MIN_SPLIT_BYTES } from './two-halves.ts';
export { dropSpareHalf, prestartHalf } from './spare-half.ts';
export { fileLineSeed } from './fast/line-hash.ts';
export { canonicalDecimal } from './fast/canonical.ts';
export { sentReasons, sentReasonsText, type SentReasons } from './sent-reasons.ts';
export type { LineCount } from './verdicts.ts';

type Row = Readonly<Record<string, unknown>>;

/**
 * What the send pass does with a valid row; `superseded`: a row of a key the file holds more than once that loses to
 * the key's row found unchanged (RowFates.winnerOf).
 */
export type RowFate = 'send' | 'unchanged' | 'sent_before' | 'superseded';

/** The send pass's side of delta push (bulk-send.ts). */
export interface RowFates {
  fateOf(line: number): RowFate;
  /** The line whose row counts for the key of a `superseded` line. */
  winnerOf(line: number): number;
  /**
   * How many lines of [from, to] are `unchanged`, the first and the last of them, into `out`: for a run of lines the
   * send pass leaves unread (ReadInit.unread), counted at once rather than line by line.
   */
  unchangedIn(from: number, to: number, out: LineCount): void;
  /**
   * What to run in the transaction of the batch checkpoint: remember the rows the API accepted, with their ids and the
   * cells they were read from (RowOutcome.rawFields: their line hash).
   */
  accepted(rows: readonly { readonly record: Row; readonly id: string | number | null; readonly raw: readonly string[] }[], refused: readonly Row[]): TxStep;
}

export interface DeltaSource {
  readonly name: string;
  readonly entity: Entity;
  readonly delta: DeltaSettings;
  /** The source's options as configured: their mapping part is fingerprinted. */
  readonly options: Readonly<Record<string, unknown>>;
  /** Which of a repeated key's rows counts (compiled: the entity's default when not configured). */
  readonly duplicateKeys: DuplicateKeyPolicy;
  /**
   * The file's line hashes (line-hash.ts): remembered with every row accepted, and the comparison's line mode; absent
   * or null where its lines have none (a workbook, `fill_down`, `{line}`).
   */
  readonly line?: LineMode | null;
}

export interface DeltaPlan {
  readonly scope: DeltaScope;
  readonly generation: number;
  readonly mode: 'delta' | 'full';
  /** Why the file is sent in full, or why rows count as changed (`mapping changed`). */
  readonly reason: string | null;
  readonly comparison: Comparison;
  /** Brakes the file trips (empty: send it). */
  readonly tripped: readonly TrippedBrake[];
  /** The missing keys as CSV (snapshot sources with missing keys), in processing/ until the report is written. */
  readonly missingCsv: string | null;
  readonly fates: RowFates;
  /** Lines the send pass need not map or validate: rows it will not send (unchanged, sent before; ReadInit.unmapped). */
  readonly unmapped: (line: number) => boolean;
  /**
   * Of those, the lines the comparison read as rows (unchanged or sent before): the send pass may leave them unsplit
   * (ReadInit.unread). A line settled only by a committed batch's span may be a blank line or a reject: not these.
   */
  readonly unread: (line: number) => boolean;
  /** `missing: delete`: the keys to delete once the file's rows are sent (delete-missing.ts), or null. */
  readonly deletions: string | null;
}

export interface PlanOptions {
  /** `push --full`. */
  readonly full?: boolean;
  /** Released by a person (`files release`): the brakes are not judged. */
  readonly released?: boolean;
}

const DAY_MS = 86_400_000;

function fullReason(source: DeltaSource, fullAt: string | null, options: PlanOptions, now: number, known: number): string | null {
  if (options.full === true) return 'push --full';
  if (known === 0) return 'first file of the source';
  const every = source.delta.fullEveryMs;
  if (every !== null && fullAt !== null) {
    // Counted from the last full send (a source's first file is one).
    const since = Date.parse(fullAt);
    if (now - since >= every) return `delta.full_every (${Math.round(every / DAY_MS) >= 1 ? `${Math.round(every / DAY_MS)} d` : `${Math.round(every / 3_600_000)} h`}) since the last full send`;
  }
  return null;
}

/** The keys to delete (missing: delete), one JSON object per line (delete-missing.ts reads them). */
function deletionWriter(path: string): { write: (key: MissingKey) => Promise<void>; close: () => Promise<void> } {
  const out = createWriteStream(path, { mode: 0o600 });
  return {
    async write(key) {
      const line = `${JSON.stringify({ h: key.keyHash.toString(), id: key.platformId } satisfies Deletion)}\n`;
      if (!out.write(line)) await once(out, 'drain');
    },
    async close() {
      out.end();
      await once(out, 'finish');
    },
  };
}

function missingWriter(path: string, entity: Entity): { write: (key: MissingKey) => Promise<void>; close: () => Promise<void> } {
  let out: WriteStream | null = null;
  const header = csvLine([...BUSINESS_KEY_FIELDS[entity], 'id']);
  return {
    async write(key) {
      if (out === null) {
        out = createWriteStream(path, { mode: 0o640 });
        out.write(header);
      }
      const fields = BUSINESS_KEY_FIELDS[entity].map((_, i) => key.key?.[i] ?? '');
      const id = key.platformId === null ? '' : String(key.platformId);
      if (!out.write(csvLine([...fields, id]))) await once(out, 'drain');
    },
    async close() {
      if (out === null) return;
      const stream: WriteStream = out;
      stream.end();
      await once(stream, 'finish');
    },
  };
}

/** Where the missing keys of a file wait for its report. */
export function missingScratchPath(file: PushFile): string {
  return join(processingDir(file.inbox), `.${file.id}-missing.csv`);
}

/**
 * Compares the claimed file with the state (one pass over `reader`, which the caller closes, or `pass`: the file in
 * halves on two threads, two-halves.ts) and plans its sending.
 */
export async function planDelta(
  deps: {
    readonly db: StateDb;
    readonly clock: Clock;
    readonly onLineFallback?: (reason: string) => void;
    readonly onLineMode?: (counts: { rows: number; undecided: number }) => void;
  },
  source: DeltaSource,
  file: PushFile,
  reader: RowReader<Row>,
  options: PlanOptions = {},
  pass: FirstPass = reader.chunks(),
): Promise<DeltaPlan> {
  const { db } = deps;
  const entity = source.entity;
  const keyOf = BUSINESS_KEYS[entity];
  const scope = await deltaScope(db, source.name, entity);
  const fields = sortedFields(reader.header.fields);
  const fingerprint = await useFingerprint(db, scope, sourceFingerprint(source.options, fields));
  await markPlatformChanges(db, scope, entity, fingerprint.generation, fields);
  const earlier = await deltaFile(db, file.id);
  const scratchDir = join(processingDir(file.inbox), `.${file.id}-delta`);
  await mkdir(scratchDir, { recursive: true, mode: 0o700 });
  const missingCsv = missingScratchPath(file);
  await rm(missingCsv, { force: true });
  const missing = source.delta.snapshot ? missingWriter(missingCsv, entity) : null;
  const deletionsPath = join(processingDir(file.inbox), `.${file.id}-delete.ndjson`);
  const deletions = source.delta.snapshot && source.delta.missing === 'delete' ? deletionWriter(deletionsPath) : null;
  const onMissing = async (key: MissingKey): Promise<void> => {
    await missing?.write(key);
    await deletions?.write(key);
  };
  // Line mode gave way for files like this one before (another header or agent version than the remembered line
  // hashes'): not tried again until every row is sent again.
  const lineSeedId = source.line === undefined || source.line === null ? null : seedId(source.line.seed);
  const triesLines = lineSeedId !== null && scope.line_failed_seed !== lineSeedId;
  if (lineSeedId !== null && !triesLines) deps.onLineFallback?.('line mode gave way for files of this header and agent version: compared by content until every row is sent again');
  let comparison: Comparison;
  try {
    comparison = await compareFile(
      {
        db,
        entity,
        scopeId: scope.id,
        generation: fingerprint.generation,
        fileId: file.id,
        fields,
        duplicateKeys: source.duplicateKeys,
        scratchDir,
        snapshot: source.delta.snapshot,
        onMissing,
        line: triesLines ? (source.line ?? null) : null,
        onLineFallback: deps.onLineFallback,
        onLineMode: deps.onLineMode,
      },
      pass,
    );
  } finally {
    await missing?.close();
    await deletions?.close();
    await rm(scratchDir, { recursive: true, force: true });
  }
  const now = deps.clock.now();
  const fullBecause = earlier?.mode === 'full' ? earlier.reason : fullReason(source, scope.full_at, options, now, comparison.counts.known);
  const mode = fullBecause === null ? 'delta' : 'full';
  // Every row is sent and remembered again with its line hash: line mode may be tried again. Else, where it gave way,
  // the next files of this seed are compared by content at once.
  const allSent = mode === 'full' || fingerprint.changed;
  if (allSent && scope.line_failed_seed !== null) await setLineFailedSeed(db, scope.id, null);
  else if (!allSent && comparison.lineGaveWay && lineSeedId !== null) await setLineFailedSeed(db, scope.id, lineSeedId);
  const reason = fullBecause ?? (fingerprint.changed ? 'mapping changed: every row is sent once' : null);
  // Judged once: a resumed file passed them before its first batch went. A released file is not judged.
  const released = options.released === true || (earlier === undefined && (await takeRelease(db, file.id, source.name, file.sha256)));
  const judge = earlier === undefined && !released;
  const tripped = judge ? trippedBrakes(source.delta.brakes, comparison, source.delta.missing === 'delete') : [];
  const c = comparison.counts;
  await saveDeltaFile(db, {
    file_id: file.id,
    mode,
    reason,
    known: c.known,
    unchanged: mode === 'full' ? 0 : c.unchanged,
    changed: c.changed,
    new_keys: c.newKeys,
    remapped: c.remapped,
    platform_changed: c.platformChanged,
    refused_before: c.refusedBefore,
    forced: mode === 'full' ? c.unchanged : 0,
    missing: c.missing,
    brakes: tripped.length > 0 ? JSON.stringify(tripped) : null,
  });

  // Rows within an earlier attempt's committed batches were settled there (sent and answered, or counted unchanged).
  // Told by the batches' lines, not by the comparison alone: another file of the source finished between the two
  // attempts (a deferred one, resumed after a restart) remembers its own file id for the keys they share, and these
  // rows then compare as unchanged, or as changed: a full send would send them again and count them twice.
  const settled = await committedSpans(db, file.id);
  const keepKeys = source.delta.snapshot;
  const seed = source.line?.seed ?? null;
  const fates: RowFates = {
    fateOf(line) {
      if (inSpans(settled, line)) return 'sent_before'; // sent or counted by a committed batch: not again
      switch (comparison.verdicts.get(line)) {
        case VERDICT.unchanged:
          return mode === 'full' ? 'send' : 'unchanged';
        case VERDICT.sentBefore:
          return 'sent_before';
        case VERDICT.superseded:
          // A full send sends its key's row too: the others go with it, and the send pass supersedes them.
          return mode === 'full' ? 'send' : 'superseded';
        default:
          return 'send';
      }
    },
    winnerOf(line) {
      const winner = comparison.winnerOf(line);
      if (winner === undefined) throw new Error(`line ${line} is not superseded by the comparison`);
      return winner;
    },
    unchangedIn(from, to, out) {
      if (mode === 'delta' && settled.length === 0) {
        comparison.verdicts.count(from, to, VERDICT.unchanged, out);
        return;
      }
      // A full send (nothing is unchanged), or a resumed file, whose committed batches' lines count as sent before.
      out.count = 0;
      for (let line = from; line <= to; line++) {
        if (fates.fateOf(line) !== 'unchanged') continue;
        if (out.count === 0) out.first = line;
        out.last = line;
        out.count += 1;
      }
    },
    accepted(rows, refused) {
      return rememberAccepted(
        scope.id,
        fingerprint.generation,
        file.id,
        rows.map(({ record, id, raw }) => {
          const keyText = keyOf(record);
          return {
            keyHash: storedKeyHash(keyText),
            content: storedContent(entity, record, fields),
            price: priceOf(entity, record),
            platformId: id,
            keyText: keepKeys ? keyText : null,
            lineHash: seed === null ? Number.NaN : lineHashOf(raw, seed),
          };
        }),
        refused.map((record) => storedKeyHash(keyOf(record))),
      );
    },
  };
  return {
    scope,
    generation: fingerprint.generation,
    mode,
    reason,
    comparison,
    tripped,
    missingCsv: c.missing > 0 ? missingCsv : null,
    fates,
    unmapped: (line) => fates.fateOf(line) !== 'send',
    unread: (line) => {
      const verdict = comparison.verdicts.get(line);
      return (verdict === VERDICT.unchanged || verdict === VERDICT.sentBefore) && fates.fateOf(line) !== 'send';
    },
    deletions: deletions !== null && c.missing > 0 ? deletionsPath : null,
  };
}

/** What a dry run of a delta source says (no state is written, nothing sent). */
export interface DeltaPreview {
  readonly mode: 'delta' | 'full';
  readonly reason: string | null;
  readonly comparison: Comparison;
  readonly tripped: readonly TrippedBrake[];
  /** Valid rows a push would not send now because the API holds them. */
  readonly unchanged: number;
}

/** The state's scope of a source, or undefined (no state yet, or one from before delta push). */
async function scopeIfAny(db: StateDb | null, source: string): Promise<DeltaScope | undefined> {
  if (db === null) return undefined;
  try {
    return await findScope(db, source);
  } catch {
    return undefined; // a database not yet migrated to 0008 (a dry run opens it read-only)
  }
}

/** The comparison a push of the file would make now, read-only (`push --dry-run`). */
export async function previewDelta(
  db: StateDb | null,
  source: DeltaSource,
  reader: RowReader<Row>,
  options: PlanOptions & { readonly scratchDir: string; readonly now: number },
): Promise<DeltaPreview> {
  const scope = await scopeIfAny(db, source.name);
  const fields = sortedFields(reader.header.fields);
  const fingerprint = sourceFingerprint(source.options, fields);
  const generation = scope === undefined ? 1 : scope.fingerprint === fingerprint ? scope.generation : scope.generation + 1;
  await mkdir(options.scratchDir, { recursive: true, mode: 0o700 });
  let comparison: Comparison;
  try {
    comparison = await compareFile(
      {
        db: scope === undefined ? null : db,
        entity: source.entity,
        scopeId: scope?.id ?? -1,
        generation,
        fileId: null,
        fields,
        duplicateKeys: source.duplicateKeys,
        scratchDir: options.scratchDir,
        snapshot: source.delta.snapshot,
      },
      reader.chunks(),
    );
  } finally {
    await rm(options.scratchDir, { recursive: true, force: true });
  }
  const c = comparison.counts;
  const full = fullReason(source, scope?.full_at ?? null, options, options.now, c.known);
  const reason = full ?? (scope?.fingerprint != null && scope.fingerprint !== fingerprint ? 'mapping changed: every row is sent once' : null);
  const tripped = options.released === true ? [] : trippedBrakes(source.delta.brakes, comparison, source.delta.missing === 'delete');
  return { mode: full === null ? 'delta' : 'full', reason, comparison, tripped, unchanged: full === null ? c.unchanged : 0 };
}
