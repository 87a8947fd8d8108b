/**
 * Comparing a file with what the API holds from its source (the first of delta push's two passes over a file; the
 * second sends, src/ingest/send/bulk-send.ts). In bounded memory whatever the number of keys:
 *
 *   every valid row -> (key hash, content hash, line, price) -> sorted runs on disk (sorted-runs.ts)
 *   merge, in key-hash order, with the source's remembered keys (delta_keys, read in pages in the same order)
 *   -> a verdict per line (verdicts.ts), counts by kind, the largest price moves, the missing keys.
 *
 * Per key of the file: unchanged when the key is remembered under this fingerprint with the same content; sent again
 * when it was sent by an earlier attempt at this same file (a restart: counted as sent, not sent twice); otherwise
 * sent (new, changed, changed on the platform, or remembered under another mapping). Remembered keys the file lacks
 * are missing (snapshot sources). A key with several rows in the file is decided by the row that counts for it under
 * `duplicate_keys` (duplicate-keys.ts winnerIndex: the last, or the first): when that row is unchanged, the others
 * are superseded without being sent; else every one of its rows is sent and the send pass supersedes, as without
 * delta (this pass does not validate rows, so it cannot tell which of them would be valid; an unchanged row is valid,
 * the API accepted it). Under `sum` and `reject` every row is sent. (Two distinct keys of the file sharing a 64-bit
 * hash are taken for one repeated key: at worst one of them is sent though unchanged, never one skipped that changed,
 * unless both rows are equal to the one remembered.)
 *
 * Line mode (a large file compared on two threads, not a snapshot source, most keys remembered with a line hash under
 * the source's mapping, by a sample of them): the first pass converts only a row's key and hashes its cells as read
 * (line-hash.ts), reading lines as bytes where that is exact (line-scan.ts); a key remembered under this mapping with the same line hash is unchanged without its other cells
 * being cleaned, converted or hashed, which is most of the first pass's work. Every
 * other remembered key's line is left undecided by the merge, then read again, converted and decided by its content
 * as above, its remembered row looked up (`settleUndecided`). Where more than a quarter of the rows are undecided (the
 * first file after the mapping, the header or the agent changed: the state then holds other line hashes, or none),
 * reading them again would cost more than comparing the whole file by content: the file is compared again that way.
 * A new key's line and every line of a key the file holds more than once are settled that way too: only their full
 * conversion tells whether content mode would count them (a row that does not convert is not compared), so the counts,
 * the verdicts and the brakes are content mode's.
 *
 * Nothing is written here: the state changes only when the API accepts a row (bulk-send) or deletes a key.
 */
import { KEY_SEPARATOR, type Entity } from '../../api/schemas/index.ts';
import type { DuplicateKeyPolicy } from '../../config/mapping-schema.ts';
import { keyDetail, keysAfter, keysByHash, lineHashShare, refusedKeys } from '../../store/delta-state.ts';
import type { StateDb } from '../../store/state-db.ts';
import { contentHash } from './fast/canonical.ts';
import { fromSigned64, hash64, toSigned64 } from './fast/hash.ts';
import type { ReadInit, RowReader } from '../read/index.ts';
import type { LineSeed } from './fast/line-hash.ts';
import { mergeRuns, SortedRuns, type RunFile } from './fast/sorted-runs.ts';
import { addKey, keyPage, keyScan, StateMerge, type KeyPage, type MergeFindings, type MergeRules, type PageSource } from './state-merge.ts';
import { settleUndecided, type SettleInput } from './settle-lines.ts';
import { collectRows, type OutcomeChunks } from './fast/row-hash.ts';
import type { Verdicts } from './verdicts.ts';

export { addKey, keyPage, PREVIEW_PRICE_MOVES, type KeyPage } from './state-merge.ts';
/** Missing keys the report and the preview name (the missing CSV has them all). */
export const PREVIEW_MISSING_KEYS = 20;
const STATE_PAGE = 2000;

export interface ComparisonCounts {
  /** Valid rows compared. */
  rows: number;
  /** Keys the state remembered for the source before this file. */
  known: number;
  unchanged: number;
  /** Remembered keys with another content. */
  changed: number;
  newKeys: number;
  /**
   * Remembered under another fingerprint (the source's mapping or the canonical form changed): sent once, whatever
   * the content; not counted by the changed-share brake (a person changed the mapping), the price brake still looks.
   */
  remapped: number;
  /** Remembered as changed on the platform since the agent sent it. */
  platformChanged: number;
  /** The API refused the key's last row (remembered or not): sent again. */
  refusedBefore: number;
  /**
   * Rows of keys the file holds more than once sent besides the row that counts for their key (it changed, or `sum`,
   * `reject`): the send pass supersedes, merges or rejects them, as without delta.
   */
  repeated: number;
  /** Sent and accepted by an earlier attempt at this file. */
  sentBefore: number;
  /** Remembered keys the file lacks. */
  missing: number;
}

export interface PriceMove {
  readonly line: number;
  readonly before: string;
  readonly after: string;
  /** From the lower to the higher price (canonical.ts priceMovePct). */
  readonly pct: number;
}

export interface MissingKey {
  readonly keyHash: bigint;
  /** The key's fields (snapshot sources remember them), or null. */
  readonly key: readonly string[] | null;
  readonly platformId: string | number | null;
}

export interface Comparison {
  readonly verdicts: Verdicts;
  /** The line whose row counts for the key of a line superseded by it (VERDICT.superseded). */
  readonly winnerOf: (line: number) => number | undefined;
  readonly counts: ComparisonCounts;
  /** The largest moves, largest first (at most PREVIEW_PRICE_MOVES). */
  readonly priceMoves: readonly PriceMove[];
  readonly maxPriceMovePct: number | null;
  /** The first missing keys (at most PREVIEW_MISSING_KEYS); every one went to `onMissing`. */
  readonly firstMissing: readonly MissingKey[];
  /** Line mode was tried and gave way to comparing by content (too many lines undecided). */
  readonly lineGaveWay: boolean;
}

export interface CompareInput {
  /** Null: nothing remembered (a dry run before the agent ever ran). */
  readonly db: StateDb | null;
  readonly entity: Entity;
  readonly scopeId: number;
  readonly generation: number;
  /** The ledger id of the file (rows it sent before a restart are recognised by it); null for a dry run. */
  readonly fileId: number | null;
  /** The API fields the file fills, sorted (the canonical form covers them). */
  readonly fields: readonly string[];
  /** The source's `duplicate_keys`: which of a repeated key's rows is compared. */
  readonly duplicateKeys: DuplicateKeyPolicy;
  /** Where the sorted runs go (removed afterwards). */
  readonly scratchDir: string;
  /** The file is a full export (a snapshot source): remembered keys it lacks are missing. */
  readonly snapshot: boolean;
  /** Every missing key, in key-hash order. */
  readonly onMissing?: (key: MissingKey) => void | Promise<void>;
  /** Line mode, where the file's lines have hashes (push-file.ts decides), or absent. */
  readonly line?: LineMode | null;
  /** Set by compareFile for the first pass it asks for (FirstPass): in line mode, the file's seed; else null. */
  readonly lineSeed?: LineSeed | null;
  /** Told why line mode gave way to comparing by content (a debug log line). */
  readonly onLineFallback?: (reason: string) => void;
  /** Told that line mode held: how many rows, and how many of them were settled by their content (a debug log line). */
  readonly onLineMode?: (counts: { rows: number; undecided: number }) => void;
}

/** What line mode needs besides the first pass: the file's seed, and the file read again (its undecided lines). */
export interface LineMode {
  readonly seed: LineSeed;
  /** The file, and a reader of it. */
  readonly file: string;
  readonly reread: (init: ReadInit) => Promise<RowReader<Row>>;
}

/** Undecided lines beyond this share of the rows: the file is compared again by content (see above). */
const MAX_UNDECIDED_SHARE = 0.25;

type Row = Readonly<Record<string, unknown>>;

/** What a first pass collected: the file's sorted runs, and what another thread does for the merge, if anything. */
export interface Collected {
  readonly runs: SortedRuns;
  /** The remembered keys, read by the thread of the second half (two-halves.ts); absent: read here, page by page. */
  readonly keys?: KeyPages;
  /** The thread of the second half, which merges the upper half of the key range (two-halves.ts), or absent. */
  readonly upper?: UpperHalf;
}

/** Another thread that merges the non-negative half of the key range of the runs with its own read of the state. */
export interface UpperHalf {
  /**
   * Its findings and verdicts (Verdicts.bytes); rejects when it failed (nothing of it is used then). `settleAtMost`:
   * in line mode, it settles the lines it left undecided (settle-lines.ts) if there are no more than that; null: not.
   * `rules`: as the main thread's merge decides.
   */
  merge(files: readonly RunFile[], settleAtMost: number | null, rules: MergeRules): Promise<{ readonly findings: MergeFindings; readonly verdicts: Uint8Array }>;
  /** Stops it (the comparison ended, or gave up). */
  close(): Promise<void>;
}

/**
 * The first pass over a file: the reader's outcomes (one thread), or a function that puts every valid row of the file
 * into sorted runs in `input.scratchDir` itself (the file read in halves on two threads: two-halves.ts).
 */
export type FirstPass = OutcomeChunks | ((input: CompareInput) => Promise<Collected>);

/** The first pass: every valid row of `rows` into sorted runs. `rows` yields the reader's outcomes in chunks. */
async function collect(input: CompareInput, rows: FirstPass): Promise<Collected> {
  if (typeof rows === 'function') return rows(input);
  const runs = new SortedRuns(input.scratchDir);
  await collectRows(input, rows, runs);
  return { runs };
}

/** Pages of remembered keys read elsewhere, in order: null after the last; rejects when the reading failed. */
export interface KeyPages {
  next(): Promise<KeyPage | null>;
  /** Stops the reading (the comparison ended, or gave up). */
  close(): Promise<void>;
}

/**
 * The scope's remembered keys, a page at a time: read here (keysAfter), or taken from another thread's reading
 * (`pages`) as long as that goes well, then read here after the last key it gave.
 */
function statePages(db: StateDb | null, scopeId: number, pages: KeyPages | null): PageSource {
  if (db === null) return () => Promise.resolve(null);
  /** The last key of the pages so far (signed 64-bit); null: from the first key. */
  let after: bigint | null = null;
  let ended = false;
  let other = pages;
  const taken = (page: KeyPage): KeyPage => {
    if (page.size > 0) after = toSigned64(page.keyHi[page.size - 1] as number, page.keyLo[page.size - 1] as number);
    return page;
  };
  return async () => {
    if (ended) return null;
    if (other !== null) {
      try {
        const page = await other.next();
        if (page === null) ended = true;
        return page === null ? null : taken(page);
      } catch {
        other = null; // read on here, from the key after the last one it gave
      }
    }
    const rows = await keysAfter(db, scopeId, after, STATE_PAGE);
    if (rows.length < STATE_PAGE) ended = true;
    if (rows.length === 0) return null;
    const page = keyPage(rows.length);
    for (const r of rows) addKey(page, r.keyHi, r.keyLo, r.contentHi, r.contentLo, r.generation, r.price, r.file_id, r.line_hash);
    return taken(page);
  };
}

export async function compareFile(input: CompareInput, rows: FirstPass): Promise<Comparison> {
  const firstMissing: MissingKey[] = [];
  const db = input.db;

  /** A remembered key the file lacks (snapshot sources): named by its text and id, in key-hash order. */
  const missing = async (keyHash: bigint): Promise<void> => {
    const detail = db === null ? { key_text: null, platform_id: null } : await keyDetail(db, input.scopeId, keyHash);
    const key: MissingKey = { keyHash, key: detail.key_text === null ? null : detail.key_text.split(KEY_SEPARATOR), platformId: detail.platform_id };
    if (firstMissing.length < PREVIEW_MISSING_KEYS) firstMissing.push(key);
    await input.onMissing?.(key);
  };
  // Line mode: a snapshot's missing keys are named during the merge, which a file compared twice would name twice.
  // Not tried for a source's first file (every line would be undecided), nor where a sample of the keys shows most of
  // them without a line hash under this mapping.
  const possible = typeof rows === 'function' && !input.snapshot && db !== null ? (input.line ?? null) : null;
  const share = possible === null ? null : await lineHashShare(db as StateDb, input.scopeId, input.generation);
  const line = share !== null && share >= 1 - MAX_UNDECIDED_SHARE ? possible : null;
  const rules: MergeRules = { duplicateKeys: input.duplicateKeys, refused: new Set(db === null ? [] : await refusedKeys(db, input.scopeId)) };
  if (share !== null && line === null) input.onLineFallback?.(`${Math.round(share * 100)} % of a sample of the keys have a line hash`);
  let merged: Merged | null = null;
  let lineGaveWay = false;
  if (line !== null) {
    merged = await mergeWithState(input, rows, null, line, rules);
    const { merge } = merged;
    // The lines either thread left unsettled (its thread failed, or settling gave up) are settled here.
    const left = merge.left;
    const settled = left <= merged.rows * MAX_UNDECIDED_SHARE && !merged.settleFailed && (await settleUndecided(merge, settling(input, line)));
    if (!settled) {
      input.onLineFallback?.(`${left} of ${merged.rows} rows not settled by their line's hash`);
      merged = null;
      lineGaveWay = true;
    } else input.onLineMode?.({ rows: merged.rows - merge.unconverted, undecided: left });
  }
  merged ??= await mergeWithState(input, rows, input.snapshot ? missing : null, null, rules);
  const { merge } = merged;
  const { counts, priceMoves, maxPriceMovePct } = merge.findings();
  // A line left undecided whose row does not convert is not one of the rows compared, as in content mode.
  counts.rows = merged.rows - merge.unconverted;
  // The largest moves name the price as the state holds it (the comparison only needed its value).
  const moves: PriceMove[] = [];
  for (const { keyHash, ...move } of priceMoves) {
    const before = db === null ? null : (await keyDetail(db, input.scopeId, keyHash)).price;
    moves.push({ ...move, before: before ?? '' });
  }
  return { verdicts: merge.verdicts, winnerOf: (l) => merge.winnerOf(l), counts, priceMoves: moves, maxPriceMovePct, firstMissing, lineGaveWay };
}

/** A merge of the file with the state (its findings and verdicts), and the rows of the file's first pass. */
interface Merged {
  readonly merge: StateMerge;
  readonly rows: number;
  /** In line mode, settling the lines a thread left undecided gave up (the file is compared by content). */
  readonly settleFailed: boolean;
}

/** What settling line mode's undecided lines reads: the file again, and the state through the agent's connection. */
function settling(input: CompareInput, line: LineMode): SettleInput {
  const db = input.db as StateDb;
  return { file: line.file, entity: input.entity, fields: input.fields, reread: line.reread, lookup: (keyHashes) => keysByHash(db, input.scopeId, keyHashes) };
}

/**
 * The first pass and the merge with the state, by content (`line` null) or in line mode, where each thread of a merge
 * on two threads settles the lines it left undecided, if they are few enough (settle-lines.ts). `missing`: told the
 * remembered keys the file lacks (snapshot sources), or null.
 */
async function mergeWithState(
  input: CompareInput,
  rows: FirstPass,
  missing: ((keyHash: bigint) => Promise<void>) | null,
  line: LineMode | null,
  rules: MergeRules,
): Promise<Merged> {
  const lineSeed = line?.seed ?? null;
  const { runs, keys, upper } = await collect({ ...input, lineSeed }, rows);
  let settleFailed = false;
  const fileId = input.fileId === null ? -1 : input.fileId;
  const db = input.db;
  const merge = new StateMerge(input.generation, fileId, missing, lineSeed !== null, rules);
  try {
    // A large file on SQLite, not a snapshot (whose missing keys are named in key order, here): each thread merges one
    // half of the key range, reading its half of the state. If the other thread fails, its half is merged here.
    const path = db?.localFile ?? null;
    const files = upper !== undefined && !input.snapshot && path !== null ? await runs.files() : null;
    if (upper !== undefined && files !== null && path !== null) {
      const most = Math.floor(runs.count * MAX_UNDECIDED_SHARE);
      const theirs = upper.merge(files, line === null ? null : most, rules).catch(() => null);
      const columns = line === null ? null : { generation: input.generation, fileId };
      const half = async (which: 'negative' | 'nonNegative') => {
        const scan = which === 'negative' ? keyScan(path, input.scopeId, null, 0n, columns) : keyScan(path, input.scopeId, -1n, null, columns);
        try {
          await merge.run(mergeRuns(files, which), scan.pages);
        } finally {
          scan.close();
        }
      };
      await half('negative');
      // While the other thread settles its own (more than a quarter of the rows undecided: the file is compared by
      // content, not worth settling).
      if (line !== null && merge.left <= most) settleFailed = !(await settleUndecided(merge, settling(input, line)));
      const found = await theirs;
      if (found === null) await half('nonNegative');
      else merge.add(found.findings, found.verdicts);
    } else {
      await merge.run(runs.blocks(), statePages(db, input.scopeId, keys ?? null));
    }
  } finally {
    await keys?.close();
    await upper?.close();
    await runs.remove();
  }
  return { merge, rows: runs.count, settleFailed };
}

/** The key hash of a key text, as stored (for rows remembered after acceptance). */
export function storedKeyHash(keyText: string): bigint {
  const h = hash64(keyText);
  return toSigned64(h.hi, h.lo);
}

/** The stored content hash of a record. */
export function storedContent(entity: Entity, record: Row, fields: readonly string[]): bigint {
  const h = contentHash(entity, record, fields);
  return toSigned64(h.hi, h.lo);
}

export { fromSigned64 };
