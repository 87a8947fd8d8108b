/**
 * How the first pass turns a row into a sorted-run entry: its key's hash (hashKey, or hashKeyBytes from the cells'
 * bytes), its content's hash and price (canonical.ts), or in line mode its line's hash (line-hash.ts). The one-thread
 * pass (compare.ts), a half on either thread (two-halves.ts, line-scan.ts) and the settling of undecided lines
 * (settle-lines.ts) all hash rows here, so the same row gives the same entry whichever way it was read.
 */
import { BUSINESS_KEY_PARTS, KEY_SEPARATOR, type Entity } from '../../../api/schemas/index.ts';
import { contentHash, priceOf } from './canonical.ts';
import { Hash64Stream } from './hash.ts';
import { lineHashOf, type LineSeed } from './line-hash.ts';
import type { SortedRuns } from './sorted-runs.ts';

type Row = Readonly<Record<string, unknown>>;

/** What the first pass makes of a row: its key's hash, its content's hash and its price. */
export interface RowHashing {
  readonly entity: Entity;
  /** The API fields the file fills, sorted (the canonical form covers them). */
  readonly fields: readonly string[];
  /** Line mode: each entry carries its line's hash, and the rows are records of their key only. Absent: content mode. */
  readonly lineSeed?: LineSeed | null;
}

/** The reader's outcomes in chunks (RowReader.chunks). */
export type OutcomeChunks = AsyncIterable<readonly { kind: string; line: number; record?: Row; rawFields?: readonly string[] }[]>;

/**
 * Every valid row of `rows` into `runs`: its key hash, content hash, line and price; in line mode its key hash, line
 * and line hash (in the price's place; NaN: none), no content.
 */
export async function collectRows(input: RowHashing, rows: OutcomeChunks, runs: SortedRuns): Promise<void> {
  const key = new Hash64Stream();
  const seed = input.lineSeed ?? null;
  for await (const chunk of rows) {
    for (const outcome of chunk) {
      if (outcome.kind !== 'row' || outcome.record === undefined) continue;
      const record = outcome.record;
      hashKey(key, input.entity, record);
      let spilling: Promise<void> | null;
      if (seed !== null) {
        const lineHash = outcome.rawFields === undefined ? Number.NaN : lineHashOf(outcome.rawFields, seed);
        spilling = runs.add(key.hi, key.lo, 0, 0, outcome.line, lineHash);
      } else {
        const content = contentHash(input.entity, record, input.fields);
        const price = priceOf(input.entity, record);
        spilling = runs.add(key.hi, key.lo, content.hi, content.lo, outcome.line, price === null ? Number.NaN : Number(price));
      }
      if (spilling !== null) await spilling;
    }
  }
}

/**
 * Into `stream`: the hash of a row's business key (BUSINESS_KEYS' text, its parts hashed one after the other: the
 * joined text is never built, which cost a copy of it per row).
 */
export function hashKey(stream: Hash64Stream, entity: Entity, record: Row): void {
  const parts = BUSINESS_KEY_PARTS[entity](record);
  stream.begin();
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) stream.add(KEY_SEPARATOR);
    stream.add(parts[i] as string);
  }
  stream.finish();
}

/**
 * hashKey of a row whose key parts are the cells `columns` (in key order) as they are, ASCII, given as bytes: the cells
 * [starts[c], ends[c]) of `bytes`. Only where the row's conversion takes those cells as they are (KEY_PARTS_AS_IS,
 * RowConversion.verbatim, CellCleaner.keeps): then it equals hashKey of the converted row, without converting it.
 */
export function hashKeyBytes(stream: Hash64Stream, bytes: Uint8Array, starts: Int32Array, ends: Int32Array, columns: readonly number[]): void {
  stream.begin();
  for (let i = 0; i < columns.length; i++) {
    if (i > 0) stream.add(KEY_SEPARATOR);
    const c = columns[i] as number;
    stream.addBytes(bytes, starts[c] as number, ends[c] as number);
  }
  stream.finish();
}
