/**
 * The one rule for rows of a file that write the same record (the same business key, src/api/schemas/entities.ts),
 * for every entity: within a file, two rows with the same key are never both accepted. Bulk sending, import sending
 * and the dry run all ask this module. The source's `duplicate_keys` decides which row counts:
 *
 * - `last` (default): the last row of a key wins, as it would on the platform; earlier rows are superseded;
 * - `first`: the first valid row of a key wins; later rows are superseded and not sent;
 * - `reject`: the first valid row of a key is sent; every later one is a reject (`duplicate_key`), so a file whose
 *   keys must be unique says so in its rejects.
 * A superseded row is neither sent nor rejected; the report lists it with the line that superseded it.
 *
 * How (constant memory whatever the file's size):
 * - a bulk batch never holds two rows of a key (product_store's bulk refuses that; for the others the request
 *   would carry a row that the same request overwrites);
 * - `last` in bulk: rows with the same key in different batches are sent in file order (key-order.ts), so the
 *   later one wins on the platform; each batch records a 64-bit hash and the line of every row it got accepted, and
 *   at the end of the file the hashes that repeat are confirmed against the rows' exact keys: every earlier accepted
 *   row of such a key is superseded after the fact (it was sent; the platform holds the later one);
 * - `first` and `reject` in bulk, and every policy in import mode (one upload must know before it is written): a
 *   first pass over the file records every valid row's key in a scratch database (FileKeys), and the losers are
 *   known before anything is sent.
 */
import Database from 'better-sqlite3';
import type BetterSqlite3 from 'better-sqlite3';
import { BUSINESS_KEY_FIELDS, BUSINESS_KEYS, type Entity } from '../api/schemas/index.ts';
import type { DuplicateKeyPolicy } from '../config/mapping-schema.ts';
import type { RowOutcome } from './read/index.ts';

export function supersededMessage(entity: Entity, winnerLine: number): string {
  return `superseded by line ${winnerLine} with the same ${BUSINESS_KEY_FIELDS[entity].join(' and ')}`;
}

export function duplicateMessage(entity: Entity, firstLine: number): string {
  return `the same ${BUSINESS_KEY_FIELDS[entity].join(' and ')} as line ${firstLine} (duplicate_keys: reject)`;
}

/** A row that does not count for its key, with the row that does. */
export interface Loser {
  readonly winner: number;
  /** `reject`: a reject (duplicate_key), not a superseded row. */
  readonly rejected: boolean;
}

/**
 * Within one bulk batch: the rows (by index, in file order) that another row of the batch with the same key beats,
 * each with the index of that row. Empty when every key is distinct (the common case: one Map pass).
 */
export function losersInBatch(keys: readonly string[], policy: DuplicateKeyPolicy): Map<number, Loser> {
  const winnerOf = new Map<string, number>();
  keys.forEach((key, i) => {
    if (policy === 'last' || !winnerOf.has(key)) winnerOf.set(key, i);
  });
  const losers = new Map<number, Loser>();
  if (winnerOf.size === keys.length) return losers;
  keys.forEach((key, i) => {
    const winner = winnerOf.get(key) as number;
    if (winner !== i) losers.set(i, { winner, rejected: policy === 'reject' });
  });
  return losers;
}

// Whole-file keys in a scratch database --------------------------------------------------------------------------------

/** Keys written between two flushes of FileKeys. */
const FLUSH_ROWS = 10_000;

/**
 * Within one whole file: every valid row's key and line, appended to a scratch database of its own, SQLite's private
 * temporary database (on disk, removed when closed; never fsynced; not the state database, so it works whatever the
 * state backend and never holds the state connection). Memory stays flat for a file of millions of rows: appends
 * cost little, and the one grouping at the end sorts on disk.
 */
export class FileKeys {
  readonly #db = new Database(''); // '' is SQLite's private temporary database
  readonly #insert: BetterSqlite3.Statement;
  #pending: [string, number][] = [];

  constructor() {
    this.#db.exec('CREATE TABLE file_keys (key TEXT NOT NULL, line INTEGER NOT NULL)');
    this.#insert = this.#db.prepare('INSERT INTO file_keys (key, line) VALUES (?, ?)');
  }

  add(key: string, line: number): void {
    this.#pending.push([key, line]);
    if (this.#pending.length >= FLUSH_ROWS) this.#flush();
  }

  /** The lines that do not count for their key under `policy`, each with the line that does. */
  losers(policy: DuplicateKeyPolicy): Map<number, Loser> {
    this.#flush();
    const winner = policy === 'last' ? 'max(line)' : 'min(line)';
    const rows = this.#db
      .prepare(
        `SELECT k.line AS line, w.winner AS winner FROM file_keys k
         JOIN (SELECT key, ${winner} AS winner, count(*) AS n FROM file_keys GROUP BY key HAVING n > 1) w ON w.key = k.key
         WHERE k.line <> w.winner`,
      )
      .all() as { line: number; winner: number }[];
    return new Map(rows.map((r) => [r.line, { winner: r.winner, rejected: policy === 'reject' }]));
  }

  /** Removes the scratch database; safe more than once. */
  close(): void {
    this.#pending = [];
    if (this.#db.open) this.#db.close();
  }

  #flush(): void {
    if (this.#pending.length === 0) return;
    const rows = this.#pending;
    this.#pending = [];
    this.#db.transaction(() => {
      for (const [key, line] of rows) this.#insert.run(key, line);
    })();
  }
}

/** Opens the source file again from its first row (a pass over the whole file, constant memory). */
export type ReopenRows<R> = () => Promise<AsyncIterable<RowOutcome<R>> & { close(): void }>;

/**
 * The rows that do not count for their key under `policy`, from a first pass over the whole file that records every
 * locally valid row's key: what `duplicate_keys: first | reject` decide before sending, and what an import (one upload)
 * decides for every policy.
 */
export async function firstPassLosers<R extends Readonly<Record<string, unknown>>>(
  reopen: ReopenRows<R>,
  entity: Entity,
  policy: DuplicateKeyPolicy,
): Promise<Map<number, Loser>> {
  const keyOf = BUSINESS_KEYS[entity];
  const keys = new FileKeys();
  try {
    const reader = await reopen();
    try {
      for await (const outcome of reader) if (outcome.kind === 'row') keys.add(keyOf(outcome.record), outcome.line);
    } finally {
      reader.close();
    }
    return keys.losers(policy);
  } finally {
    keys.close();
  }
}

// Key hashes of accepted rows (bulk, `last`) --------------------------------------------------------------------------

/**
 * A 64-bit hash of a key as two 32-bit halves: FNV-1a and a multiply-rotate hash over the UTF-16 units. Not
 * cryptographic, and it need not be: a repeated hash is only a candidate, confirmed against the exact keys.
 */
export function keyHash(key: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (let i = 0; i < key.length; i++) {
    const unit = key.charCodeAt(i);
    a = Math.imul(a ^ unit, 0x01000193);
    b = Math.imul(b ^ unit, 0x5bd1e995);
    b ^= b >>> 15;
  }
  b = Math.imul(b ^ (b >>> 13), 0xc2b2ae35);
  return [a >>> 0, (b ^ (b >>> 16)) >>> 0];
}

/** Bytes per accepted row in a batch's key hashes: hash high, hash low, line (little-endian 32-bit integers). */
const ENTRY_BYTES = 12;

/** The key hashes of one batch's accepted rows, as stored with its checkpoint. */
export class BatchKeyHashes {
  readonly #values: number[] = [];

  add(key: string, line: number): void {
    const [hi, lo] = keyHash(key);
    this.#values.push(hi, lo, line);
  }

  bytes(): Uint8Array | undefined {
    if (this.#values.length === 0) return undefined;
    return new Uint8Array(Uint32Array.from(this.#values).buffer);
  }
}

/** Hashes examined per pass at most (8 bytes each): the memory a file's check takes whatever its size. */
const HASHES_PER_PASS = 1_000_000;

/**
 * The lines of accepted rows whose key hash another accepted row of the file has (candidates: the exact keys decide).
 * `batches` yields the stored key hashes; it is read once per pass. With more than HASHES_PER_PASS rows the hashes
 * are split by their high bits into passes, so memory stays bounded.
 */
export async function linesWithRepeatedHashes(
  batches: () => AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  accepted: number,
  perPass = HASHES_PER_PASS,
): Promise<Set<number>> {
  const passes = Math.max(1, Math.ceil(accepted / perPass));
  const lines = new Set<number>();
  const entries = async function* (): AsyncGenerator<[number, number, number]> {
    for await (const blob of batches()) {
      const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
      for (let at = 0; at + ENTRY_BYTES <= blob.byteLength; at += ENTRY_BYTES) {
        yield [view.getUint32(at, true), view.getUint32(at + 4, true), view.getUint32(at + 8, true)];
      }
    }
  };
  for (let pass = 0; pass < passes; pass++) {
    const hashes: bigint[] = [];
    for await (const [hi, lo] of entries()) if (hi % passes === pass) hashes.push((BigInt(hi) << 32n) | BigInt(lo));
    const sorted = BigUint64Array.from(hashes).sort();
    const repeated = new Set<bigint>();
    for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) repeated.add(sorted[i] as bigint);
    if (repeated.size === 0) continue;
    for await (const [hi, lo, line] of entries()) {
      if (hi % passes === pass && repeated.has((BigInt(hi) << 32n) | BigInt(lo))) lines.add(line);
    }
  }
  return lines;
}

/**
 * Of accepted rows that share a key (by exact key), every one but the last: superseded after the fact, each with the
 * line of the last row of its key.
 */
export function supersededAfterSend(keyed: ReadonlyMap<number, string>): Map<number, number> {
  const last = new Map<string, number>();
  for (const [line, key] of keyed) if ((last.get(key) ?? -1) < line) last.set(key, line);
  const superseded = new Map<number, number>();
  for (const [line, key] of keyed) {
    const winner = last.get(key) as number;
    if (winner !== line) superseded.set(line, winner);
  }
  return superseded;
}
