/**
 * Comparing a file with what the API holds from its source (the first of delta push's two passes over a file; the
 * second sends, src/ingest/bulk-send.ts). In bounded memory whatever the number of keys:
 *
 *   every valid row -> (key hash, content hash, line, price) -> sorted runs on disk (sorted-runs.ts)
 *   merge, in key-hash order, with the source's remembered keys (delta_keys, read in pages in the same order)
 *   -> a verdict per line (verdicts.ts), counts by kind, the largest price moves, the missing keys.
 *
 * Per key of the file: unchanged when the key is remembered under this fingerprint with the same content; sent again
 * when it was sent by an earlier attempt at this same file (a restart: counted as sent, not sent twice); otherwise
 * sent (new, changed, changed on the platform, or remembered under another mapping). Remembered keys the file lacks
 * are missing (snapshot sources). A key with several rows in the file is left to the send pass: every one of its
 * rows is sent there, under the one superseded-row rule (duplicate-keys.ts), as without delta. (This pass does not
 * validate rows, so it cannot tell which of them would be valid. Two distinct keys of the file sharing a 64-bit hash
 * land there too, as one repeated key: both sent, never compared; the send pass, which compares keys, supersedes
 * neither.)
 *
 * Nothing is written here: the state changes only when the API accepts a row (bulk-send) or deletes a key.
 */
import { KEY_SEPARATOR, type Entity } from '../../api/schemas/index.ts';
import { keyDetail, keysAfter } from '../../store/delta-state.ts';
import type { StateDb } from '../../store/state-db.ts';
import { contentHash, priceMoveOf, priceOf } from './canonical.ts';
import { compareHashes, fromSigned64, hash64, Hash64Stream, toSigned64 } from './hash.ts';
import { SortedRuns } from './sorted-runs.ts';
import { VERDICT, Verdicts } from './verdicts.ts';

/** Price moves the preview of a held file lists. */
export const PREVIEW_PRICE_MOVES = 20;
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
  /** Rows of keys the file holds more than once: sent, the send pass supersedes as without delta. */
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
  readonly counts: ComparisonCounts;
  /** The largest moves, largest first (at most PREVIEW_PRICE_MOVES). */
  readonly priceMoves: readonly PriceMove[];
  readonly maxPriceMovePct: number | null;
  /** The first missing keys (at most PREVIEW_MISSING_KEYS); every one went to `onMissing`. */
  readonly firstMissing: readonly MissingKey[];
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
  /** Where the sorted runs go (removed afterwards). */
  readonly scratchDir: string;
  readonly keyOf: (row: Readonly<Record<string, unknown>>) => string;
  /** The file is a full export (a snapshot source): remembered keys it lacks are missing. */
  readonly snapshot: boolean;
  /** Every missing key, in key-hash order. */
  readonly onMissing?: (key: MissingKey) => void | Promise<void>;
}

type Row = Readonly<Record<string, unknown>>;

/** What the first pass makes of a row: its key's hash, its content's hash and its price. */
export interface RowHashing {
  readonly entity: Entity;
  /** The API fields the file fills, sorted (the canonical form covers them). */
  readonly fields: readonly string[];
  readonly keyOf: (row: Readonly<Record<string, unknown>>) => string;
}

/** The reader's outcomes in chunks (RowReader.chunks). */
export type OutcomeChunks = AsyncIterable<readonly { kind: string; line: number; record?: Row }[]>;

/** What a first pass collected: the file's sorted runs, and the source's keys if another thread reads them. */
export interface Collected {
  readonly runs: SortedRuns;
  /** The remembered keys, read by the thread of the second half (two-halves.ts); absent: read here, page by page. */
  readonly keys?: KeyPages;
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
}

/** Pages of remembered keys read elsewhere, in order: null after the last; rejects when the reading failed. */
export interface KeyPages {
  next(): Promise<KeyPage | null>;
  /** Stops the reading (the comparison ended, or gave up). */
  close(): Promise<void>;
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
  };
}

/** Adds a key, its columns as keysAfter reads them, to `page`. */
export function addKey(page: KeyPage, keyHi: number, keyLo: number, contentHi: number, contentLo: number, generation: number, price: string | null, fileId: number): void {
  const i = page.size;
  page.keyHi[i] = keyHi;
  page.keyLo[i] = keyLo;
  page.contentHi[i] = contentHi;
  page.contentLo[i] = contentLo;
  page.generation[i] = generation;
  page.fileId[i] = fileId;
  page.price[i] = price === null ? Number.NaN : Number(price);
  page.size = i + 1;
}

/** Every valid row of `rows` into `runs`: its key hash, content hash, line and price. */
export async function collectRows(input: RowHashing, rows: OutcomeChunks, runs: SortedRuns): Promise<void> {
  const key = new Hash64Stream();
  for await (const chunk of rows) {
    for (const outcome of chunk) {
      if (outcome.kind !== 'row' || outcome.record === undefined) continue;
      const record = outcome.record;
      key.begin();
      key.add(input.keyOf(record));
      key.finish();
      const content = contentHash(input.entity, record, input.fields);
      const price = priceOf(input.entity, record);
      const spilling = runs.add(key.hi, key.lo, content.hi, content.lo, outcome.line, price === null ? Number.NaN : Number(price));
      if (spilling !== null) await spilling;
    }
  }
}

/**
 * The remembered keys of the scope in key-hash order, a page at a time: the current one is `at` in `page`. Pages come
 * from another thread when it reads them (`pages`), else from keysAfter here; if that thread's reading fails, the
 * rest is read here, after the last key it gave.
 */
class Remembered {
  page: KeyPage = keyPage(0);
  at = 0;
  #ended: boolean;
  #pages: KeyPages | null;
  /** The last key of the pages so far (signed 64-bit), or null. */
  #after: bigint | null = null;
  readonly #db: StateDb | null;
  readonly #scopeId: number;

  constructor(db: StateDb | null, scopeId: number, pages: KeyPages | null) {
    this.#db = db;
    this.#scopeId = scopeId;
    this.#ended = db === null;
    this.#pages = db === null ? null : pages;
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
    const { page } = this;
    if (page.size > 0) this.#after = toSigned64(page.keyHi[page.size - 1] as number, page.keyLo[page.size - 1] as number);
    this.at = 0;
    if (this.#ended || this.#db === null) {
      this.page = keyPage(0);
      return;
    }
    if (this.#pages !== null) {
      try {
        const next = await this.#pages.next();
        if (next === null) this.#ended = true;
        this.page = next ?? keyPage(0);
        return;
      } catch {
        this.#pages = null; // read on here, from the key after the last one it gave
      }
    }
    const rows = await keysAfter(this.#db, this.#scopeId, this.#after, STATE_PAGE);
    const next = keyPage(rows.length);
    for (const r of rows) addKey(next, r.keyHi, r.keyLo, r.contentHi, r.contentLo, r.generation, r.price, r.file_id);
    this.page = next;
    if (rows.length < STATE_PAGE) this.#ended = true;
  }
}

/** A price move found, with its key (the price as the state holds it is looked up for the largest ones). */
type MoveOfKey = PriceMove & { readonly keyHash: bigint };

/** A small top-N by pct, kept sorted. */
function keepLargest(moves: MoveOfKey[], move: MoveOfKey): void {
  if (moves.length === PREVIEW_PRICE_MOVES && (moves.at(-1) as MoveOfKey).pct >= move.pct) return;
  moves.push(move);
  moves.sort((a, b) => b.pct - a.pct || a.line - b.line);
  if (moves.length > PREVIEW_PRICE_MOVES) moves.pop();
}

export async function compareFile(input: CompareInput, rows: FirstPass): Promise<Comparison> {
  const { runs, keys } = await collect(input, rows);
  const verdicts = new Verdicts();
  const counts: ComparisonCounts = {
    rows: runs.count,
    known: 0,
    unchanged: 0,
    changed: 0,
    newKeys: 0,
    remapped: 0,
    platformChanged: 0,
    repeated: 0,
    sentBefore: 0,
    missing: 0,
  };
  const priceMoves: MoveOfKey[] = [];
  let maxPriceMovePct: number | null = null;
  const firstMissing: MissingKey[] = [];
  const fileId = input.fileId === null ? -1 : input.fileId;

  const state = new Remembered(input.db, input.scopeId, keys ?? null);
  /** The current key of `state` is missing from the file. */
  const missing = async (): Promise<void> => {
    counts.missing += 1;
    const keyHash = toSigned64(state.page.keyHi[state.at] as number, state.page.keyLo[state.at] as number);
    const detail = input.db === null ? { key_text: null, platform_id: null } : await keyDetail(input.db, input.scopeId, keyHash);
    const key: MissingKey = { keyHash, key: detail.key_text === null ? null : detail.key_text.split(KEY_SEPARATOR), platformId: detail.platform_id };
    if (firstMissing.length < PREVIEW_MISSING_KEYS) firstMissing.push(key);
    await input.onMissing?.(key);
  };

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

  /** Decides the gathered key: `at` is its row in the state's current page, or -1 for a key not remembered. */
  const decide = (at: number): void => {
    if (more.length > 0) {
      verdicts.set(line, VERDICT.send);
      for (const l of more) verdicts.set(l, VERDICT.send);
      counts.repeated += 1 + more.length;
      return;
    }
    if (at < 0) {
      counts.newKeys += 1;
      verdicts.set(line, VERDICT.send);
      return;
    }
    const page = state.page;
    const rowContentHi = page.contentHi[at] as number;
    const rowContentLo = page.contentLo[at] as number;
    const remapped = page.generation[at] !== input.generation;
    const same = rowContentHi === (contentHi | 0) && rowContentLo === contentLo;
    if (!remapped && same) {
      const sentBefore = page.fileId[at] === fileId;
      if (sentBefore) counts.sentBefore += 1;
      else counts.unchanged += 1;
      verdicts.set(line, sentBefore ? VERDICT.sentBefore : VERDICT.unchanged);
      return;
    }
    if (remapped) counts.remapped += 1;
    else if (rowContentHi === 0 && rowContentLo === 0) counts.platformChanged += 1;
    else counts.changed += 1;
    verdicts.set(line, VERDICT.send);
    const before = page.price[at] as number;
    if (!Number.isNaN(before) && !Number.isNaN(price)) {
      const pct = priceMoveOf(before, price);
      if (pct !== null) {
        maxPriceMovePct = Math.max(maxPriceMovePct ?? 0, pct);
        const keyHash = toSigned64(page.keyHi[at] as number, page.keyLo[at] as number);
        if (pct > 0) keepLargest(priceMoves, { line, before: '', after: String(price), pct, keyHash });
      }
    }
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
      if (input.snapshot) {
        return missing().then(() => {
          state.at += 1;
          return settle();
        });
      }
      state.at += 1;
    }
    decide(at);
    has = false;
    more.length = 0;
    return null;
  };
  try {
    await state.load();
    for await (const block of runs.blocks()) {
      for (let i = 0; i < block.size; i++) {
        const hi = block.keyHi[i] as number;
        const lo = block.keyLo[i] as number;
        if (has && hi === keyHi && lo === keyLo) {
          more.push(block.line[i] as number);
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
      if (input.snapshot) await missing();
      state.at += 1;
    }
  } finally {
    await keys?.close();
    await runs.remove();
  }
  // The largest moves name the price as the state holds it (the comparison only needed its value).
  const moves: PriceMove[] = [];
  for (const { keyHash, ...move } of priceMoves) {
    const before = input.db === null ? null : (await keyDetail(input.db, input.scopeId, keyHash)).price;
    moves.push({ ...move, before: before ?? '' });
  }
  return { verdicts, counts, priceMoves: moves, maxPriceMovePct, firstMissing };
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
