/**
 * Delta push's first pass on both cores: a large CSV file is cut in two at a line break near its middle and the halves
 * are compared at once, the first on this thread, the second in a worker thread (half-worker.ts). The sandbox or the
 * API is idle meanwhile: the first pass sends nothing.
 *
 * Each half is read by the same reader as the whole file, as the header line followed by the half's own lines
 * (ReadInit.byteRanges), so a row of either half is split, cleaned, converted and hashed exactly as a read of the
 * whole file would do it. The second half numbers its lines from the header's; they are moved by the first half's
 * line count when its sorted runs are merged with the first's (SortedRuns.adopt). Why the halves equal the whole:
 *
 * - the cut is just after an LF, so the first half ends with a complete line; it is a record break too (not a line
 *   break inside quotes) when the first half's own read ends without an open quote, which a quote left open at
 *   its end would fail (then: the one-thread pass below);
 * - what one row's outcome depends on besides its own cells is the header (read by both), the file's name (given to
 *   both) and two things a half does not know, which keep a source on one thread: `fill_down` (a cell taken from the
 *   rows above) and a `{line}` template (the line number is part of the value);
 * - UTF-8 only (an LF byte is never part of another character there; a UTF-16 file is read on one thread).
 *
 * Anything that goes wrong in either half (a broken file, a worker that cannot start, a half that does not end
 * cleanly) discards both halves' runs and compares the whole file on one thread, which fails or succeeds as it
 * always did: the halves are a way to go faster, never a second opinion. Small files (below MIN_SPLIT_BYTES) are
 * read on one thread: starting a worker costs more than it saves.
 *
 * Once both halves are done, with a SQLite state, the merge with the source's remembered keys runs on both threads
 * too: the worker merges the non-negative half of the key range of every run (both halves' runs), reading that half of
 * the keys on a read-only connection of its own (store/delta-state.ts scanDeltaKeys), while the main thread merges the
 * negative half with its own reads (state-merge.ts); the worker's verdicts and findings are added to the main
 * thread's. If the worker fails, the main thread merges its half too. For a snapshot source, whose missing keys are
 * named in key order by the main thread, the worker only reads the keys and hands them over in pages of columns while
 * the main thread merges them all (compare.ts KeyPages), a few pages ahead at most; if that reading fails, the merge
 * reads on by itself from the last key it got. A PostgreSQL state is read by the main thread alone, as before.
 */
import { open as openFile } from 'node:fs/promises';
import type { Entity } from '../../api/schemas/index.ts';
import type { ReadOptions, ReadInit, RowReader } from '../read/index.ts';
import type { CompiledSource } from '../read/compile-source.ts';
import type { HeaderInfo } from '../read/types.ts';
import type { ByteRange } from '../read/open-source.ts';
import { BUSINESS_KEY_FIELDS } from '../../api/schemas/index.ts';
import { dependsOnOtherLines, type LineSeed } from './fast/line-hash.ts';
import { collectHalf } from './fast/line-scan.ts';
import { collectRows } from './fast/row-hash.ts';
import type { CompareInput, Collected, FirstPass, KeyPage, KeyPages, UpperHalf } from './compare.ts';
import { SortedRuns, type RunFile } from './fast/sorted-runs.ts';
import { halfThread, spareWaiting } from './spare-half.ts';
import type { MergeFindings, MergeRules } from './state-merge.ts';

/** Files smaller than this are compared on one thread. */
export const MIN_SPLIT_BYTES = 16 * 1024 * 1024;
/**
 * Where the cut is looked for, as a share of the file: a little after the middle, as the second half's thread first
 * loads its modules (about a tenth of the pass) while the first half is read; nearer the middle when a thread started
 * ahead has loaded them already (spare-half.ts).
 */
const CUT_SHARE = 0.55;
const WARM_CUT_SHARE = 0.52;
/**
 * In line mode (compare.ts), where a row read as bytes (line-scan.ts) costs about a third as much: the second thread's
 * start is a larger part of its half, so the first half is longer (measured on bench:delta's day 2: at 53 % and at 57 %
 * either thread waited up to 60 ms for the other, from one run to the next).
 */
const LINE_CUT_SHARE = 0.58;
const WARM_LINE_CUT_SHARE = 0.55;
/** How far the header's end and the cut are looked for. */
const PROBE_BYTES = 1024 * 1024;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;

/** Where a file is cut: the header line is bytes [bomLength, headerEnd), the halves [headerEnd, cut) and [cut, size). */
export interface Cut {
  readonly bomLength: number;
  readonly headerEnd: number;
  readonly cut: number;
  readonly size: number;
}

/** What the second half's worker is asked (structured-cloned). */
export interface HalfJob {
  readonly file: string;
  readonly options: ReadOptions;
  readonly entity: Entity;
  readonly name: string;
  readonly ranges: readonly ByteRange[];
  readonly scratchDir: string;
  /** Line mode (compare.ts): the file's seed; null: by content. */
  readonly lineSeed: LineSeed | null;
  /** Then read the scope's remembered keys from this SQLite state file, or null. */
  readonly keys: { readonly path: string; readonly scopeId: number } | null;
  /** Or then merge the upper half of the key range with the keys of this SQLite state file (MergeOrder), or null. */
  readonly merge: { readonly path: string; readonly scopeId: number; readonly generation: number; readonly fileId: number } | null;
}

/**
 * What the main thread sends a worker of HalfJob.merge once both halves are done: every run file to merge, and in line
 * mode how many undecided lines it settles at most (UpperHalf.merge).
 */
export interface MergeOrder {
  readonly kind: 'merge';
  readonly files: readonly RunFile[];
  readonly settleAtMost: number | null;
  /** The keys the API refused (MergeRules.refused; the worker takes `duplicate_keys` from the source's options). */
  readonly refused: ReadonlySet<bigint>;
}

/** What it answers: its findings and verdicts (Verdicts.bytes, transferred), or why it failed. */
export type MergeResult =
  | { readonly ok: true; readonly findings: MergeFindings; readonly verdicts: Uint8Array }
  | { readonly ok: false; readonly error: string };

/** What it answers about its half. */
export type HalfResult =
  | { readonly ok: true; readonly paths: string[]; readonly count: number; readonly fields: string[] }
  | { readonly ok: false; readonly error: string };

/** Its messages: its half, then (HalfJob.keys) pages of keys, their end or why it could not read them. */
export type HalfMessage =
  | { readonly kind: 'half'; readonly result: HalfResult }
  | { readonly kind: 'keys'; readonly page: KeyPage }
  | { readonly kind: 'keysEnd' }
  | { readonly kind: 'keysFailed'; readonly error: string }
  | { readonly kind: 'merged'; readonly result: MergeResult };

/** What the main thread says each time it takes a page of keys (the worker reads at most KEY_PAGES_AHEAD ahead). */
export const MORE_KEYS = 'more';
/** What it says when it wants no more keys: the worker closes its connection and ends. */
export const STOP_KEYS = 'stop';
export const KEY_PAGES_AHEAD = 4;
export const KEY_PAGE_SIZE = 4096;

/**
 * Where `file` can be cut in two, or null: smaller than `minBytes`, no LF after its header line within a mebibyte, a
 * header line with a quote or a lone CR, or no LF within a mebibyte after CUT_SHARE of it.
 */
export async function cutInTwo(file: string, minBytes = MIN_SPLIT_BYTES, share = CUT_SHARE): Promise<Cut | null> {
  const handle = await openFile(file, 'r');
  try {
    const size = (await handle.stat()).size;
    if (size < minBytes) return null;
    const head = Buffer.alloc(Math.min(PROBE_BYTES, size));
    const read = (await handle.read(head, 0, head.length, 0)).bytesRead;
    const bomLength = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
    const lf = head.subarray(0, read).indexOf(LF, bomLength);
    if (lf < 0) return null;
    const header = head.subarray(bomLength, lf);
    // A quoted header cell may hold a line break; a lone CR ends the header line before the LF.
    if (header.includes(QUOTE)) return null;
    const cr = header.indexOf(CR);
    if (cr >= 0 && cr !== header.length - 1) return null;
    const headerEnd = lf + 1;
    const from = Math.max(headerEnd, Math.floor(size * share));
    const probe = Buffer.alloc(Math.min(PROBE_BYTES, size - from));
    const probed = (await handle.read(probe, 0, probe.length, from)).bytesRead;
    const at = probe.subarray(0, probed).indexOf(LF);
    if (at < 0) return null;
    const cut = from + at + 1;
    return cut < size ? { bomLength, headerEnd, cut, size } : null;
  } finally {
    await handle.close();
  }
}

export interface HalvesInput {
  readonly file: string;
  readonly compiled: CompiledSource;
  readonly entity: Entity;
  /** The file's name as dropped (what `file_name` and `{file.name}` read). */
  readonly name: string;
  /** The whole file's header, as read (the encoding a BOM chose, workbook or not, a corrected rejects file). */
  readonly header: HeaderInfo;
  /** Opens the file again (the first half: `byteRanges`). */
  readonly open: (init: ReadInit) => Promise<RowReader<Readonly<Record<string, unknown>>>>;
  /** The whole file, read on one thread if the halves cannot be (its chunks not yet iterated). */
  readonly whole: RowReader<Readonly<Record<string, unknown>>>;
  /** Test seam: the smallest file cut in two. */
  readonly minBytes?: number;
  /** Told why the halves were given up for the one-thread pass (a debug log line). */
  readonly onFallback?: (reason: string) => void;
  /** Told why the second thread's merge failed, and the main thread merged its half of the keys too (a debug line). */
  readonly onMergeFallback?: (reason: string) => void;
}

/** The first pass of delta push for a file: in two halves on two threads where that is exact, else the whole file. */
export async function firstPass(input: HalvesInput): Promise<FirstPass> {
  const { header } = input;
  // The halves are read as the header line and their own lines: a header elsewhere, or over several lines, is read whole.
  if (header.sheet !== null || header.fixFile || header.encoding !== 'utf-8' || header.headerEndLine !== 1 || dependsOnOtherLines(input.compiled)) return input.whole.chunks();
  const warm = spareWaiting();
  const cut = await cutInTwo(input.file, input.minBytes, warm ? WARM_CUT_SHARE : CUT_SHARE);
  if (cut === null) return input.whole.chunks();
  const lineCut = async (): Promise<Cut> => (await cutInTwo(input.file, input.minBytes, warm ? WARM_LINE_CUT_SHARE : LINE_CUT_SHARE)) ?? cut;
  // Asked again when a comparison in line mode gives way to one by content (compare.ts): the whole file's reader can be
  // read once, so a second one-thread pass opens the file again.
  let wholeRead = false;
  return async (compare) => {
    try {
      return await inHalves(input, compare.lineSeed == null ? cut : await lineCut(), compare);
    } catch (error) {
      input.onFallback?.(error instanceof Error ? error.message : String(error));
      const runs = new SortedRuns(compare.scratchDir);
      const whole = wholeRead ? await input.open({ unvalidated: true }) : input.whole;
      wholeRead = true;
      try {
        await collectRows(compare, whole.chunks(), runs);
      } finally {
        if (whole !== input.whole) whole.close();
      }
      return { runs };
    }
  };
}

interface Half {
  readonly result: Promise<HalfResult>;
  /** The keys it reads once its half is done (HalfJob.keys), or null. */
  readonly keys: KeyPages | null;
  /** The merge of the upper half of the key range it runs once asked (HalfJob.merge), or null. */
  readonly upper: UpperHalf | null;
  stop(): Promise<void>;
}

function startHalf(job: HalfJob): Half {
  // Not unref'd: the main thread waits for its messages with nothing else to keep the process running. Every path
  // stops it (inHalves on a failure, the comparison's end: KeyPages.close).
  const worker = halfThread(job);
  let answer!: (result: HalfResult) => void;
  const result = new Promise<HalfResult>((resolve) => (answer = resolve));
  const pages: KeyPage[] = [];
  let keysEnded = false;
  let keysFailed: string | null = null;
  let merged!: (result: MergeResult) => void;
  const mergeResult = new Promise<MergeResult>((resolve) => (merged = resolve));
  let wake: (() => void) | null = null;
  const woken = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const failed = (error: string) => {
    answer({ ok: false, error });
    keysFailed ??= error;
    merged({ ok: false, error });
    woken();
  };
  worker.on('message', (message: HalfMessage) => {
    if (message.kind === 'half') answer(message.result);
    else if (message.kind === 'keys') pages.push(message.page);
    else if (message.kind === 'keysEnd') keysEnded = true;
    else if (message.kind === 'merged') merged(message.result);
    else keysFailed = message.error;
    woken();
  });
  worker.once('error', (error: Error) => failed(`the second half's thread failed: ${error.message}`));
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    worker.once('exit', (code) => {
      exited = true;
      failed(`the second half's thread exited with ${code}`);
      resolve();
    }),
  );
  /**
   * Ends the thread. One that will read keys (to hand them over or to merge) is asked to stop (it does once its half
   * is read, or at its next page of keys), so that it closes its read transaction itself: one left open would keep
   * the WAL from being checkpointed. One that will not opens no connection: terminated.
   */
  const stop = async (): Promise<void> => {
    if (exited) return;
    if (job.keys === null && job.merge === null) await worker.terminate();
    else {
      worker.postMessage(STOP_KEYS);
      await exit;
    }
  };
  const keys: KeyPages | null =
    job.keys === null
      ? null
      : {
          async next() {
            for (;;) {
              const page = pages.shift();
              if (page !== undefined) {
                worker.postMessage(MORE_KEYS);
                return page;
              }
              if (keysEnded) return null;
              if (keysFailed !== null) throw new Error(keysFailed);
              await new Promise<void>((resolve) => (wake = resolve));
            }
          },
          close: stop,
        };
  const upper: UpperHalf | null =
    job.merge === null
      ? null
      : {
          async merge(files, settleAtMost, rules) {
            worker.postMessage({ kind: 'merge', files, settleAtMost, refused: rules.refused } satisfies MergeOrder);
            const done = await mergeResult;
            if (!done.ok) throw new Error(done.error);
            return done;
          },
          close: stop,
        };
  return { result, keys, upper, stop };
}

async function inHalves(input: HalvesInput, cut: Cut, compare: CompareInput): Promise<Collected> {
  const second = startHalf({
    file: input.file,
    options: input.compiled.options,
    entity: input.entity,
    name: input.name,
    ranges: [
      { start: cut.bomLength, end: cut.headerEnd },
      { start: cut.cut, end: cut.size },
    ],
    scratchDir: compare.scratchDir,
    lineSeed: compare.lineSeed ?? null,
    keys: compare.db?.localFile != null && compare.snapshot ? { path: compare.db.localFile, scopeId: compare.scopeId } : null,
    merge:
      compare.db?.localFile != null && !compare.snapshot
        ? { path: compare.db.localFile, scopeId: compare.scopeId, generation: compare.generation, fileId: compare.fileId ?? -1 }
        : null,
  });
  let runs = new SortedRuns(compare.scratchDir);
  try {
    const byteRanges = [{ start: cut.bomLength, end: cut.cut }];
    const first = await input.open(compare.lineSeed == null ? { unvalidated: true, byteRanges } : { keysOnly: BUSINESS_KEY_FIELDS[input.entity], byteRanges });
    let lines: number;
    try {
      const fresh = () => (runs = new SortedRuns(compare.scratchDir));
      ({ runs, lines } = await collectHalf({ file: input.file, body: { start: cut.headerEnd, end: cut.cut }, reader: first, hashing: compare, fresh }, runs));
    } finally {
      first.close();
    }
    const half = await second.result;
    if (!half.ok) throw new Error(half.error);
    runs.adopt(half.paths, half.count, lines - 1);
    if (half.fields.join('\n') !== compare.fields.join('\n')) throw new Error('the halves read different fields from the header');
    // The worker goes on reading the keys or waits to merge (if it was asked to): stopped by the comparison
    // (KeyPages.close, UpperHalf.close).
    if (second.keys !== null) return { runs, keys: second.keys };
    const upper = second.upper;
    if (upper === null) return { runs };
    const merge = (files: readonly RunFile[], settleAtMost: number | null, rules: MergeRules) =>
      upper.merge(files, settleAtMost, rules).catch((error: unknown) => {
        input.onMergeFallback?.(error instanceof Error ? error.message : String(error));
        throw error;
      });
    return { runs, upper: { merge, close: () => upper.close() } };
  } catch (error) {
    await second.stop();
    await runs.remove();
    throw error;
  } finally {
    if (second.keys === null && second.upper === null) await second.stop();
  }
}
