/**
 * The merge at the heart of the comparison (compare.ts): the file's entries in key-hash order (sorted-runs.ts) against
 * the source's remembered keys in the same order, one key at a time, into a verdict per line, counts by kind and the
 * largest price moves; remembered keys the file lacks are handed to `onMissing` (snapshot sources).
 *
 * A merge may cover one half of the key range (sorted-runs.ts KeyHalf) and `run` again over the other: a large file's
 * halves are merged at once, one on each thread (two-halves.ts), each reading its own half of the remembered keys, and
 * the other thread's findings are added (`add`). No key is in both halves, so the sum is the merge of the whole: every
 * line is decided by one half, the counts add up, and the largest moves of the whole are among the halves' largest.
 */
import type { DuplicateKeyPolicy } from '../../config/mapping-schema.ts';
import { scanDeltaKeys, type DeltaKeyTuple, type LineColumns, type LineKeyTuple } from '../../store/delta-state.ts';
import { winnerIndex } from '../file/duplicate-keys.ts';
import type { ComparisonCounts, PriceMove } from './compare.ts';
import { priceMoveOf } from './fast/canonical.ts';
import { compareHashes, toSigned64 } from './fast/hash.ts';
import { offsetOf, type EntryBlock } from './fast/sorted-runs.ts';
import { VERDICT, Verdicts } from './verdicts.ts';

/**
 * Undecided lines whose places a merge keeps (StateMerge.undecidedPlaces), at most: 4 MiB; beyond, they are found by
 * reading the file again (a quarter of the rows undecided makes the file be compared by content anyway).
 */
const MAX_PLACED = 262_144;

/** Price moves the preview of a held file lists. */
export const PREVIEW_PRICE_MOVES = 20;

/**
 * Remembered keys in key-hash order as columns, as keysAfter reads them (store/delta-state.ts): the high halves
 * signed, the low halves unsigned; `price` as a number (NaN: none), what a price move is measured from.
 */
export interface KeyPage {
  size: number;
  readonly keyHi: Int32Array;
  readonly keyLo: Uint32Array;
  readonly contentHi: Int32Array;
  readonly contentLo: Uint32Array;
  readonly generation: Float64Array;
  readonly fileId: Float64Array;
  readonly price: Float64Array;
  /** The line hash remembered (line-hash.ts), NaN: none. */
  readonly lineHash: Float64Array;
}

export function keyPage(capacity: number): KeyPage {
  return {
    size: 0,
    keyHi: new Int32Array(capacity),
    keyLo: new Uint32Array(capacity),
    contentHi: new Int32Array(capacity),
    contentLo: new Uint32Array(capacity),
    generation: new Float64Array(capacity),
    fileId: new Float64Array(capacity),
    price: new Float64Array(capacity),
    lineHash: new Float64Array(capacity),
  };
}

/** Adds a key, its columns as keysAfter reads them, to `page`. */
export function addKey(
  page: KeyPage,
  keyHi: number,
  keyLo: number,
  contentHi: number,
  contentLo: number,
  generation: number,
  price: string | null,
  fileId: number,
  lineHash: number | string | null,
): void {
  const i = page.size;
  page.keyHi[i] = keyHi;
  page.keyLo[i] = keyLo;
  page.contentHi[i] = contentHi;
  page.contentLo[i] = contentLo;
  page.generation[i] = generation;
  page.fileId[i] = fileId;
  page.price[i] = price === null ? Number.NaN : Number(price);
  page.lineHash[i] = lineHash === null ? Number.NaN : Number(lineHash);
  page.size = i + 1;
}

/** A page of the keys scanDeltaKeys read. */
export function pageOfTuples(rows: readonly DeltaKeyTuple[]): KeyPage {
  const page = keyPage(rows.length);
  for (const r of rows) addKey(page, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]);
  return page;
}

/**
 * A page of the keys a merge in line mode read (scanDeltaKeys with LineColumns): what their status says of their
 * generation and file, as the decision compares them (NaN: not the file's); no content, no price.
 */
export function pageOfLineTuples(rows: readonly LineKeyTuple[], line: LineColumns): KeyPage {
  const page = keyPage(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const [keyHi, keyLo, status, lineHash] = rows[i] as LineKeyTuple;
    page.keyHi[i] = keyHi;
    page.keyLo[i] = keyLo;
    page.generation[i] = status === 2 ? Number.NaN : line.generation;
    page.fileId[i] = status === 1 ? line.fileId : Number.NaN;
    page.price[i] = Number.NaN;
    page.lineHash[i] = lineHash === null ? Number.NaN : lineHash;
  }
  page.size = rows.length;
  return page;
}

/** The next page of remembered keys in key-hash order, or null after the last. */
export type PageSource = () => Promise<KeyPage | null>;

/**
 * Keys a merge reads itself (scanDeltaKeys) per page: small pages, so that few of them are alive at each collection
 * of the young generation (larger ones made the heap, and the process's peak memory, grow).
 */
const SCAN_PAGE = 1024;

/**
 * The pages of a scan (scanDeltaKeys), made by `toPage`; `stopped` ends it with an error. Return the scan to close its
 * connection.
 */
function scanPages<T>(scan: Generator<T[]>, toPage: (rows: T[]) => KeyPage, stopped: () => boolean = () => false): PageSource {
  return () => {
    if (stopped()) return Promise.reject(new Error('stopped'));
    const next = scan.next();
    return Promise.resolve(next.done === true ? null : toPage(next.value));
  };
}

/** A remembered key's row as a decision reads it (a page's columns at one index, or a row looked up). */
export interface RememberedRow {
  readonly keyHi: number;
  readonly keyLo: number;
  readonly contentHi: number;
  readonly contentLo: number;
  readonly generation: number;
  readonly fileId: number;
  /** NaN: none. */
  readonly price: number;
}

/**
 * The scope's keys after `after` and before `before` (exclusive; null: unbounded), read on a read-only connection of
 * their own (scanDeltaKeys) in pages: every column, or what a merge in line mode reads (`line`). `close` closes the
 * connection; `stopped` ends the reading with an error.
 */
export function keyScan(
  path: string,
  scopeId: number,
  after: bigint | null,
  before: bigint | null,
  line: LineColumns | null,
  stopped?: () => boolean,
): { readonly pages: PageSource; close(): void } {
  if (line === null) {
    const scan = scanDeltaKeys(path, scopeId, SCAN_PAGE, after, before);
    return { pages: scanPages(scan, pageOfTuples, stopped), close: () => void scan.return(undefined) };
  }
  const scan = scanDeltaKeys(path, scopeId, SCAN_PAGE, after, before, line);
  return { pages: scanPages(scan, (rows) => pageOfLineTuples(rows, line), stopped), close: () => void scan.return(undefined) };
}

/** A price move found, with its key (the price as the state holds it is looked up for the largest ones). */
export type MoveOfKey = PriceMove & { readonly keyHash: bigint };

/** What a merge found besides its verdicts; plain data (another thread's half comes back as this). */
export interface MergeFindings {
  readonly counts: ComparisonCounts;
  /**
   * Lines a merge in line mode left undecided (VERDICT.undecided, VERDICT.undecidedRepeated): settled by `settle` and
   * `settleRepeated`.
   */
  readonly undecided: number;
  /** Of them, the lines of keys the file holds more than once (VERDICT.undecidedRepeated). */
  readonly repeatedUndecided: number;
  /** Lines the merge left undecided, whether settled since or not. */
  readonly left: number;
  /** Of the lines settled, those whose row does not convert: not among the rows compared (`settle` with no row). */
  readonly unconverted: number;
  /** The largest, largest first (at most PREVIEW_PRICE_MOVES). */
  readonly priceMoves: readonly MoveOfKey[];
  readonly maxPriceMovePct: number | null;
  /** Lines of repeated keys superseded by their key's unchanged row (VERDICT.superseded), each with that row's line. */
  readonly winners: readonly (readonly [number, number])[];
}

/** What decides a key besides the state: which of a repeated key's rows counts, and the keys the API refused. */
export interface MergeRules {
  /** The source's `duplicate_keys` (duplicate-keys.ts winnerIndex). */
  readonly duplicateKeys: DuplicateKeyPolicy;
  /** Keys whose last row the API refused (store/delta-state.ts refusedKeys), signed 64-bit. */
  readonly refused: ReadonlySet<bigint>;
}

/** A row of a key: its line, its content's hash and its price (NaN: none). */
export interface KeyRow {
  readonly line: number;
  readonly contentHi: number;
  readonly contentLo: number;
  readonly price: number;
}

export function emptyCounts(): ComparisonCounts {
  return { rows: 0, known: 0, unchanged: 0, changed: 0, newKeys: 0, remapped: 0, platformChanged: 0, refusedBefore: 0, repeated: 0, sentBefore: 0, missing: 0 };
}

/**
 * A small top-N by pct, kept sorted; of equal moves, the one on the earlier line: the same moves in whatever order they
 * are offered (the halves of a merge, the lines settled after it).
 */
function keepLargest(moves: MoveOfKey[], move: MoveOfKey): void {
  const last = moves.at(-1);
  if (moves.length === PREVIEW_PRICE_MOVES && last !== undefined && (last.pct > move.pct || (last.pct === move.pct && last.line < move.line))) return;
  moves.push(move);
  moves.sort((a, b) => b.pct - a.pct || a.line - b.line);
  if (moves.length > PREVIEW_PRICE_MOVES) moves.pop();
}

/** The remembered keys of a merge, a page at a time: the current one is `at` in `page`. */
class Remembered {
  page: KeyPage = keyPage(0);
  at = 0;
  #ended = false;
  readonly #next: PageSource;

  constructor(next: PageSource) {
    this.#next = next;
  }

  /** A current key: false at the end of the page (then `load`, unless `ended`). */
  get has(): boolean {
    return this.at < this.page.size;
  }

  /** No key after this page. */
  get ended(): boolean {
    return this.#ended && this.at >= this.page.size;
  }

  async load(): Promise<void> {
    this.at = 0;
    const next = this.#ended ? null : await this.#next();
    if (next === null) this.#ended = true;
    this.page = next ?? keyPage(0);
  }
}

export class StateMerge {
  readonly verdicts = new Verdicts();
  readonly counts: ComparisonCounts = emptyCounts();
  readonly #moves: MoveOfKey[] = [];
  #maxPriceMovePct: number | null = null;
  readonly #generation: number;
  readonly #fileId: number;
  readonly #onMissing: ((keyHash: bigint) => Promise<void>) | null;
  readonly #lineMode: boolean;
  readonly #rules: MergeRules;
  /** Loser line -> its key's winning line, of repeated keys whose winning row is unchanged. */
  readonly #winners = new Map<number, number>();
  #undecided = 0;
  #repeatedUndecided = 0;
  #left = 0;
  #unconverted = 0;
  /** The lines this merge left undecided and their byte offsets in the file (line-scan.ts), while all are known. */
  #undecidedLines: number[] | null = [];
  #undecidedOffsets: number[] = [];

  /**
   * `generation`: the source's current one; `fileId`: the file's (-1: none); `onMissing`: told every remembered key
   * the file lacks, in key-hash order (null: not looked for). `lineMode`: the entries carry line hashes in place of
   * their content hash and price (compare.ts, line mode).
   */
  constructor(generation: number, fileId: number, onMissing: ((keyHash: bigint) => Promise<void>) | null, lineMode: boolean, rules: MergeRules) {
    this.#rules = rules;
    this.#generation = generation;
    this.#fileId = fileId;
    this.#onMissing = onMissing;
    this.#lineMode = lineMode;
  }

  /** Lines left undecided so far (line mode). */
  get undecided(): number {
    return this.#undecided;
  }

  /** Of them, the lines of keys the file holds more than once. */
  get repeatedUndecided(): number {
    return this.#repeatedUndecided;
  }

  /** Lines the merge left undecided (line mode), whether settled since or not. */
  get left(): number {
    return this.#left;
  }

  /** Lines settled with no row (their cells do not convert): not among the rows compared. */
  get unconverted(): number {
    return this.#unconverted;
  }

  /**
   * The lines this merge left undecided and where each starts in the file, when every one of them is known (their
   * half was read as bytes, no other merge's undecided lines were added, and there are at most MAX_PLACED of them);
   * else null: they are found by reading the file again.
   */
  undecidedPlaces(): { readonly lines: readonly number[]; readonly offsets: readonly number[] } | null {
    return this.#undecidedLines === null ? null : { lines: this.#undecidedLines, offsets: this.#undecidedOffsets };
  }

  /** A line left undecided, at byte `offset` of the file (0: not known). */
  #leave(line: number, offset: number, verdict: typeof VERDICT.undecided | typeof VERDICT.undecidedRepeated): void {
    this.verdicts.set(line, verdict);
    this.#undecided += 1;
    this.#left += 1;
    if (verdict === VERDICT.undecidedRepeated) this.#repeatedUndecided += 1;
    const lines = this.#undecidedLines;
    if (lines === null) return;
    if (offset === 0 || lines.length === MAX_PLACED) {
      this.#undecidedLines = null;
      this.#undecidedOffsets = [];
    } else {
      lines.push(line);
      this.#undecidedOffsets.push(offset);
    }
  }

  findings(): MergeFindings {
    return {
      counts: { ...this.counts },
      undecided: this.#undecided,
      repeatedUndecided: this.#repeatedUndecided,
      left: this.#left,
      unconverted: this.#unconverted,
      priceMoves: [...this.#moves],
      maxPriceMovePct: this.#maxPriceMovePct,
      winners: [...this.#winners],
    };
  }

  /** The line whose row counts for the key of a superseded line (VERDICT.superseded), or undefined. */
  winnerOf(line: number): number | undefined {
    return this.#winners.get(line);
  }

  /** A key the state does not remember: sent, as new, or as refused before (the API refused its last row). */
  #decideNew(line: number, keyHi: number, keyLo: number): void {
    if (this.#rules.refused.has(toSigned64(keyHi, keyLo))) this.counts.refusedBefore += 1;
    else this.counts.newKeys += 1;
    this.verdicts.set(line, VERDICT.send);
  }

  /**
   * The rows of a key the file holds more than once, in file order (`known`: the key's remembered row, or null). The
   * row `duplicate_keys` makes count (winnerIndex) is decided as any key's row; when it is unchanged the others are
   * superseded by it here (not sent, or they would overwrite it); else all are sent and the send pass supersedes as
   * without delta (it also knows which rows are valid), the others counted `repeated`. `sum` and `reject`: no row
   * counts alone, all are sent.
   */
  #decideRepeated(rows: readonly KeyRow[], keyHi: number, keyLo: number, known: RememberedRow | null): void {
    const at = winnerIndex(this.#rules.duplicateKeys, rows.length);
    const winner = at === null ? undefined : rows[at];
    if (winner !== undefined) {
      if (known === null) this.#decideNew(winner.line, keyHi, keyLo);
      else this.#decideKnown(winner.line, winner.contentHi, winner.contentLo, winner.price, known);
    }
    const kept = winner !== undefined && this.verdicts.get(winner.line) !== VERDICT.send;
    for (const row of rows) {
      if (row === winner) continue;
      if (kept) {
        this.verdicts.set(row.line, VERDICT.superseded);
        this.#winners.set(row.line, winner.line);
      } else {
        this.verdicts.set(row.line, VERDICT.send);
        this.counts.repeated += 1;
      }
    }
  }

  /**
   * Decides a line whose key the state remembers, by its content: unchanged (or sent before), else sent (changed,
   * changed on the platform, refused before, or remembered under another mapping), its price move measured.
   */
  #decideKnown(line: number, contentHi: number, contentLo: number, price: number, known: RememberedRow): void {
    const { counts, verdicts } = this;
    const remapped = known.generation !== this.#generation;
    const same = known.contentHi === (contentHi | 0) && known.contentLo === contentLo;
    if (!remapped && same) {
      const sentBefore = known.fileId === this.#fileId;
      if (sentBefore) counts.sentBefore += 1;
      else counts.unchanged += 1;
      verdicts.set(line, sentBefore ? VERDICT.sentBefore : VERDICT.unchanged);
      return;
    }
    if (remapped) counts.remapped += 1;
    else if (this.#rules.refused.has(toSigned64(known.keyHi, known.keyLo))) counts.refusedBefore += 1;
    else if (known.contentHi === 0 && known.contentLo === 0) counts.platformChanged += 1;
    else counts.changed += 1;
    verdicts.set(line, VERDICT.send);
    const before = known.price;
    if (!Number.isNaN(before) && !Number.isNaN(price)) {
      const pct = priceMoveOf(before, price);
      if (pct !== null) {
        this.#maxPriceMovePct = Math.max(this.#maxPriceMovePct ?? 0, pct);
        if (pct > 0) keepLargest(this.#moves, { line, before: '', after: String(price), pct, keyHash: toSigned64(known.keyHi, known.keyLo) });
      }
    }
  }

  /**
   * Settles a line a merge in line mode left undecided, with its row converted (its content hash and price) and the
   * key's remembered row (null: no longer remembered, then it is new). `row` null: its cells did not convert; it is
   * sent, and the send pass rejects it, as it would without delta.
   */
  settle(line: number, row: (KeyRow & { readonly keyHi: number; readonly keyLo: number }) | null, known: RememberedRow | null): void {
    this.#settled(line);
    if (row === null) {
      this.#unconverted += 1;
      this.verdicts.set(line, VERDICT.send);
    } else if (known === null) this.#decideNew(line, row.keyHi, row.keyLo);
    else this.#decideKnown(line, row.contentHi, row.contentLo, row.price, known);
  }

  /**
   * Settles the lines of one key the file holds more than once whose rows convert, in file order, as content mode
   * decides them (#decideRepeated); one alone is decided as any other line (`settle`). The lines whose rows do not
   * convert are settled by `settle` with no row.
   */
  settleRepeated(rows: readonly (KeyRow & { readonly keyHi: number; readonly keyLo: number })[], known: RememberedRow | null): void {
    const first = rows[0];
    if (first === undefined) return;
    if (rows.length === 1) return this.settle(first.line, first, known);
    for (const { line } of rows) this.#settled(line);
    this.#decideRepeated(rows, first.keyHi, first.keyLo, known);
  }

  /** An undecided line is being settled. */
  #settled(line: number): void {
    const verdict = this.verdicts.get(line);
    if (verdict !== VERDICT.undecided && verdict !== VERDICT.undecidedRepeated) throw new Error(`line ${line} is not undecided`);
    this.#undecided -= 1;
    if (verdict === VERDICT.undecidedRepeated) this.#repeatedUndecided -= 1;
  }

  /** Adds another merge's findings and verdicts (Verdicts.bytes), of a part of the key range this one did not cover. */
  add(other: MergeFindings, verdicts: Uint8Array): void {
    for (const name of Object.keys(this.counts) as (keyof ComparisonCounts)[]) this.counts[name] += other.counts[name];
    this.#undecided += other.undecided;
    this.#repeatedUndecided += other.repeatedUndecided;
    this.#left += other.left;
    this.#unconverted += other.unconverted;
    if (other.undecided > 0) {
      // Their places stayed with the other merge.
      this.#undecidedLines = null;
      this.#undecidedOffsets = [];
    }
    for (const move of other.priceMoves) keepLargest(this.#moves, move);
    for (const [loser, winner] of other.winners) this.#winners.set(loser, winner);
    if (other.maxPriceMovePct !== null) this.#maxPriceMovePct = Math.max(this.#maxPriceMovePct ?? 0, other.maxPriceMovePct);
    this.verdicts.include(verdicts);
  }

  /**
   * Merges the entries of `blocks` with the remembered keys of `pages`, both of the same part of the key range (after
   * any part merged before).
   */
  async run(blocks: AsyncIterable<EntryBlock>, pages: PageSource): Promise<void> {
    const { counts, verdicts } = this;
    const state = new Remembered(pages);
    const missing = this.#onMissing;
    const generation = this.#generation;
    const fileId = this.#fileId;
    const lineMode = this.#lineMode;
    const known: { -readonly [K in keyof RememberedRow]: RememberedRow[K] } = { keyHi: 0, keyLo: 0, contentHi: 0, contentLo: 0, generation: 0, fileId: 0, price: 0 };

    /**
     * The key being gathered from the merged entries: its first row's hashes, line and price, and the lines of any
     * further rows of the same key (`more`). Kept as numbers: an object per entry cost more than the comparison.
     */
    let has = false;
    let keyHi = 0;
    let keyLo = 0;
    let contentHi = 0;
    let contentLo = 0;
    let line = 0;
    let price = Number.NaN;
    const more: number[] = [];
    /** In line mode, where the lines of `more` start in the file; in content mode, their rows (#decideRepeated). */
    const moreAt: number[] = [];
    const moreRows: KeyRow[] = [];

    /** The remembered row at `at` of the state's current page, into `known` (content mode). */
    const knownAt = (at: number): RememberedRow => {
      const page = state.page;
      // One object reused for every key (an object per key cost the merge a collection of its young generation).
      known.keyHi = page.keyHi[at] as number;
      known.keyLo = page.keyLo[at] as number;
      known.contentHi = page.contentHi[at] as number;
      known.contentLo = page.contentLo[at] as number;
      known.generation = page.generation[at] as number;
      known.fileId = page.fileId[at] as number;
      known.price = page.price[at] as number;
      return known;
    };

    /** Decides the gathered key: `at` is its row in the state's current page, or -1 for a key not remembered. */
    const decide = (at: number): void => {
      if (more.length > 0) {
        // In line mode a row is its key alone: which of these rows convert, and so how many of them content mode
        // would compare, is known once they are read again (settleRepeated).
        if (lineMode) {
          this.#leave(line, offsetOf(contentHi, contentLo), VERDICT.undecidedRepeated);
          more.forEach((l, i) => this.#leave(l, moreAt[i] as number, VERDICT.undecidedRepeated));
          return;
        }
        this.#decideRepeated([{ line, contentHi, contentLo, price }, ...moreRows], keyHi, keyLo, at < 0 ? null : knownAt(at));
        return;
      }
      if (at < 0) {
        // In line mode, new only if its row converts (else content mode would not count it): settled after the merge.
        if (lineMode) this.#leave(line, offsetOf(contentHi, contentLo), VERDICT.undecided);
        else this.#decideNew(line, keyHi, keyLo);
        return;
      }
      const page = state.page;
      if (lineMode) {
        // `price` holds the line's hash here. Equal to the one remembered under this mapping: the same cells under the
        // same header, so the same row (a row the platform changed has no line hash: store/delta-state.ts). Anything
        // else is decided by content. The page may lack contents and prices (read in line mode: not needed here).
        if (page.generation[at] === generation && page.lineHash[at] === price) {
          const sentBefore = page.fileId[at] === fileId;
          if (sentBefore) counts.sentBefore += 1;
          else counts.unchanged += 1;
          verdicts.set(line, sentBefore ? VERDICT.sentBefore : VERDICT.unchanged);
        } else this.#leave(line, offsetOf(contentHi, contentLo), VERDICT.undecided);
        return;
      }
      this.#decideKnown(line, contentHi, contentLo, price, knownAt(at));
    };

    /** The current key of `state` is missing from the file. */
    const lacked = (): Promise<void> => {
      counts.missing += 1;
      return (missing as (keyHash: bigint) => Promise<void>)(toSigned64(state.page.keyHi[state.at] as number, state.page.keyLo[state.at] as number));
    };

    /**
     * Decides the gathered key against the state; the remembered keys before it are missing. Returns a promise only
     * when it has to wait (the next page of the state, a missing key named): not once per row.
     */
    const settle = (): Promise<unknown> | null => {
      if (!has) return null;
      let at = -1;
      for (;;) {
        if (!state.has) {
          if (state.ended) break;
          return state.load().then(settle);
        }
        const order = compareHashes(state.page.keyHi[state.at] as number, state.page.keyLo[state.at] as number, keyHi, keyLo);
        if (order > 0) break;
        counts.known += 1;
        if (order === 0) {
          at = state.at;
          state.at += 1;
          break;
        }
        if (missing !== null) {
          return lacked().then(() => {
            state.at += 1;
            return settle();
          });
        }
        state.at += 1;
      }
      decide(at);
      has = false;
      more.length = 0;
      moreAt.length = 0;
      moreRows.length = 0;
      return null;
    };

    await state.load();
    for await (const block of blocks) {
      for (let i = 0; i < block.size; i++) {
        const hi = block.keyHi[i] as number;
        const lo = block.keyLo[i] as number;
        if (has && hi === keyHi && lo === keyLo) {
          more.push(block.line[i] as number);
          if (lineMode) moreAt.push(offsetOf(block.contentHi[i] as number, block.contentLo[i] as number));
          else moreRows.push({ line: block.line[i] as number, contentHi: block.contentHi[i] as number, contentLo: block.contentLo[i] as number, price: block.price[i] as number });
          continue;
        }
        const waiting = settle();
        if (waiting !== null) await waiting;
        has = true;
        keyHi = hi;
        keyLo = lo;
        contentHi = block.contentHi[i] as number;
        contentLo = block.contentLo[i] as number;
        line = block.line[i] as number;
        price = block.price[i] as number;
      }
    }
    await settle();
    // The remembered keys after the file's last one.
    for (;;) {
      if (!state.has) {
        if (state.ended) break;
        await state.load();
        continue;
      }
      counts.known += 1;
      if (missing !== null) await lacked();
      state.at += 1;
    }
  }
}
