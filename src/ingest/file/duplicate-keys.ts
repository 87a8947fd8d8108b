/**
 * The one rule for rows of a file that write the same record (the same business key, src/api/schemas/entities.ts),
 * for every entity: within a file, two rows with the same key are never both accepted. Bulk sending, import sending
 * and the dry run all ask this module. The source's `duplicate_keys` decides (default by entity, duplicateKeysDefault):
 *
 * - `sum` (transactions' default): the rows are events of one sale; when they agree on everything but quantity and
 *   revenue (till-lines.ts) they are sent as one row, the first, carrying the sums, and the others are `merged` into
 *   it; when they disagree every one of them is a reject (`duplicate_key_conflict`) naming the others' lines, so no
 *   sale is dropped without a word;
 * - `last` (the others' default): the last row of a key wins, as it would on the platform; earlier rows are superseded;
 * - `first`: the first valid row of a key wins; later rows are superseded and not sent;
 * - `reject`: every row of a repeated key is a reject (`duplicate_key`) naming the others' lines, so a file whose keys
 *   must be unique says so in its rejects and nothing of such a key is guessed.
 * A superseded or merged row is neither sent nor rejected; the report lists it with the line that counts for it.
 *
 * How (constant memory whatever the file's size):
 * - a bulk batch never holds two rows of a key (product_store's bulk refuses that; for the others the request
 *   would carry a row that the same request overwrites);
 * - `last` in bulk: rows with the same key in different batches are sent in file order (key-order.ts), so the
 *   later one wins on the platform; each batch records a 64-bit hash and the line of every row it got accepted, and
 *   at the end of the file the hashes that repeat are confirmed against the rows' exact keys: every earlier accepted
 *   row of such a key is superseded after the fact (it was sent; the platform holds the later one);
 * - `sum`, `first` and `reject` in bulk, and every policy in import mode (one upload must know before it is written):
 *   a first pass over the file records every valid row's key (and for `sum` the row) in a scratch database
 *   (FileKeys), and the losers, and the sums, are known before anything is sent.
 */
import Database from 'better-sqlite3';
import type BetterSqlite3 from 'better-sqlite3';
import { BUSINESS_KEY_FIELDS, BUSINESS_KEYS, type Entity } from '../../api/schemas/index.ts';
import type { DuplicateKeyPolicy } from '../../config/mapping-schema.ts';
import type { RejectRow } from '../../store/push-ledger.ts';
import type { RowOutcome } from '../read/index.ts';
import { LineSummer } from './till-lines.ts';

type Row = Readonly<Record<string, unknown>>;

export function supersededMessage(entity: Entity, winnerLine: number): string {
  return `superseded by line ${winnerLine} with the same ${BUSINESS_KEY_FIELDS[entity].join(' and ')}`;
}

/** At most this many other lines are named in one row's reason (a key repeated a thousand times names ten). */
const LINES_NAMED = 10;

/** `others`: the first lines of the key but this one (at most LINES_NAMED), of `count` in all. */
function linesText(others: readonly number[], count: number): string {
  const more = count > others.length ? ` and ${count - others.length} more` : '';
  return `line${count === 1 ? '' : 's'} ${others.join(', ')}${more}`;
}

export function duplicateMessage(entity: Entity, others: readonly number[], count = others.length): string {
  return `the same ${BUSINESS_KEY_FIELDS[entity].join(' and ')} as ${linesText(others, count)} (duplicate_keys: reject); none of them was sent`;
}

export function conflictMessage(entity: Entity, others: readonly number[], count: number, differ: readonly string[]): string {
  return (
    `the same ${BUSINESS_KEY_FIELDS[entity].join(' and ')} as ${linesText(others, count)} but another ${differ.join(' and ')}: ` +
    `not added up (duplicate_keys: sum adds up only lines that agree on everything but quantity and revenue); none of them was sent`
  );
}

export function mergedMessage(entity: Entity, winnerLine: number): string {
  return `merged into line ${winnerLine}: the same ${BUSINESS_KEY_FIELDS[entity].join(' and ')}, its quantity added (duplicate_keys: sum)`;
}

/** A row that does not count for its key on its own, and why. */
export type Loser =
  /** Another row of the key counts instead (`last`, `first`). */
  | { readonly fate: 'superseded'; readonly winner: number }
  /** Added up into the row at `winner`, which is sent with the sums (`sum`). */
  | { readonly fate: 'merged'; readonly winner: number }
  /**
   * Rejected with every other row of its key: `reject`, or `sum` with rows that disagree on `differ`. `others`: the
   * first of them (at most LINES_NAMED: a key repeated 100,000 times names ten lines per row, not 99,999), of `count`.
   */
  | { readonly fate: 'rejected'; readonly others: readonly number[]; readonly count: number; readonly differ?: readonly string[] };

/** What a file's repeated keys come to: the rows that lose, and the rows sent in place of a key's first (`sum`). */
export interface KeyDecisions {
  readonly losers: ReadonlyMap<number, Loser>;
  /** Line of a key's first row -> the row sent for the key (its quantity and revenue summed over the key's rows). */
  readonly merged: ReadonlyMap<number, Row>;
}

export const NO_DECISIONS: KeyDecisions = { losers: new Map(), merged: new Map() };

/** The ledger's row for a loser (rejects CSV, report, files show): one wording for bulk, import and the dry run. */
export function loserRow(entity: Entity, line: number, loser: Loser, raw: readonly string[]): RejectRow {
  switch (loser.fate) {
    case 'superseded':
      return { line, stage: 'superseded', field: null, code: 'superseded', message: supersededMessage(entity, loser.winner), raw };
    case 'merged':
      return { line, stage: 'merged', field: null, code: 'merged', message: mergedMessage(entity, loser.winner), raw };
    case 'rejected':
      return loser.differ === undefined
        ? { line, stage: 'local', field: null, code: 'duplicate_key', message: duplicateMessage(entity, loser.others, loser.count), raw }
        : { line, stage: 'local', field: null, code: 'duplicate_key_conflict', message: conflictMessage(entity, loser.others, loser.count, loser.differ), raw };
  }
}

/**
 * Within one bulk batch, `last`: the rows (by index, in file order) that a later row of the batch with the same key
 * beats, each with the index of that row. Empty when every key is distinct (the common case: one Map pass).
 */
export function losersInBatch(keys: readonly string[]): Map<number, Loser> {
  const winnerOf = new Map<string, number>();
  keys.forEach((key, i) => winnerOf.set(key, i));
  const losers = new Map<number, Loser>();
  if (winnerOf.size === keys.length) return losers;
  keys.forEach((key, i) => {
    const winner = winnerOf.get(key) as number;
    if (winner !== i) losers.set(i, { fate: 'superseded', winner });
  });
  return losers;
}

/** The decision for the rows of one repeated key: its lines in file order, and for `sum` its rows added up. */
function decideKey(policy: DuplicateKeyPolicy, lines: readonly number[], summer: LineSummer | null, out: { losers: Map<number, Loser>; merged: Map<number, Row> }): void {
  const reject = (differ?: readonly string[]) => {
    const named = lines.slice(0, LINES_NAMED + 1);
    for (const line of lines) {
      const others = named.filter((l) => l !== line).slice(0, LINES_NAMED);
      out.losers.set(line, { fate: 'rejected', others, count: lines.length - 1, ...(differ === undefined ? {} : { differ }) });
    }
  };
  if (policy === 'reject') return reject();
  if (policy === 'sum' && summer !== null) {
    const sum = summer.result();
    if ('differ' in sum) return reject(sum.differ);
    const [first, ...rest] = lines as [number, ...number[]];
    out.merged.set(first, sum.row);
    for (const line of rest) out.losers.set(line, { fate: 'merged', winner: first });
    return;
  }
  const winner = lines[winnerIndex(policy, lines.length) ?? 0] as number;
  for (const line of lines) if (line !== winner) out.losers.set(line, { fate: 'superseded', winner });
}

/**
 * Which of a repeated key's `count` valid rows (in file order) counts for it, the others superseded: its index; null
 * where no row counts alone (`sum` adds them up, `reject` rejects them all). Delta push compares that row with what
 * the API holds (src/ingest/delta/state-merge.ts).
 */
export function winnerIndex(policy: DuplicateKeyPolicy, count: number): number | null {
  if (policy === 'last') return count - 1;
  if (policy === 'first') return 0;
  return null;
}

// Whole-file keys in a scratch database --------------------------------------------------------------------------------

/** Keys written between two flushes of FileKeys. */
const FLUSH_ROWS = 10_000;

/**
 * The scratch database's page cache, in KiB (SQLite's `cache_size`; negative: KiB). It also bounds the memory of
 * `decide`'s sort: SQLite sorts runs of at most the cache's size in memory and merges them from disk. better-sqlite3's
 * default of 16,000 KiB cost a large push 16 MB of cache filled by the appends, then 16 MB of sort buffer on top, and
 * the process kept most of it after the scratch database was closed (freed, not returned to the system). Appends touch
 * only the table's last pages, and the sort reads each run once. Measured on a million rows of the bench's
 * transactions: appends and sort as fast with 2 MiB (within the spread of a shared machine), the process's
 * high-water mark 30 MB lower.
 */
const SCRATCH_CACHE_KIB = 2048;

/**
 * Within one whole file: every valid row's key and line, appended to a scratch database of its own, SQLite's private
 * temporary database (on disk, removed when closed; never fsynced; not the state database, so it works whatever the
 * state backend and never holds the state connection). Memory stays flat for a file of millions of rows: appends
 * cost little, and the one grouping at the end sorts on disk.
 */
export class FileKeys {
  readonly #db = new Database(''); // '' is SQLite's private temporary database
  readonly #insert: BetterSqlite3.Statement;
  #pending: [string, number, string | null][] = [];

  constructor() {
    this.#db.pragma(`cache_size = -${SCRATCH_CACHE_KIB}`);
    this.#db.exec('CREATE TABLE file_keys (key TEXT NOT NULL, line INTEGER NOT NULL, row TEXT)');
    this.#insert = this.#db.prepare('INSERT INTO file_keys (key, line, row) VALUES (?, ?, ?)');
  }

  /** `row`: kept for `sum` (the rows of a repeated key are added up at the end); JSON, on disk like the keys. */
  add(key: string, line: number, row?: Row): void {
    this.#pending.push([key, line, row === undefined ? null : JSON.stringify(row)]);
    if (this.#pending.length >= FLUSH_ROWS) this.#flush();
  }

  /**
   * What `policy` makes of the repeated keys: read key by key, so memory holds one key's lines and running sums at a
   * time (and the decisions: a map entry per row of a repeated key, a row per summed key).
   */
  decide(policy: DuplicateKeyPolicy): KeyDecisions {
    this.#flush();
    const out = { losers: new Map<number, Loser>(), merged: new Map<number, Row>() };
    const repeated = this.#db.prepare(
      `SELECT key, line, row FROM file_keys WHERE key IN (SELECT key FROM file_keys GROUP BY key HAVING count(*) > 1) ORDER BY key, line`,
    );
    let key: string | null = null;
    let lines: number[] = [];
    let summer: LineSummer | null = null;
    for (const r of repeated.iterate() as Iterable<{ key: string; line: number; row: string | null }>) {
      if (r.key !== key) {
        if (key !== null) decideKey(policy, lines, summer, out);
        key = r.key;
        lines = [];
        summer = policy === 'sum' ? new LineSummer() : null;
      }
      lines.push(r.line);
      if (r.row !== null) summer?.add(JSON.parse(r.row) as Row);
    }
    if (key !== null) decideKey(policy, lines, summer, out);
    return out;
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
      for (const [key, line, row] of rows) this.#insert.run(key, line, row);
    })();
  }
}

/** Opens the source file again from its first row (a pass over the whole file, constant memory). */
export type ReopenRows<R> = () => Promise<AsyncIterable<RowOutcome<R>> & { close(): void }>;

/**
 * What `policy` makes of the file's repeated keys, from a first pass over the whole file that records every locally
 * valid row's key (and for `sum` the row): what `duplicate_keys: sum | first | reject` decide before sending, and what
 * an import (one upload) decides for every policy.
 */
export async function firstPassDecisions<R extends Readonly<Record<string, unknown>>>(
  reopen: ReopenRows<R>,
  entity: Entity,
  policy: DuplicateKeyPolicy,
): Promise<KeyDecisions> {
  const keyOf = BUSINESS_KEYS[entity];
  const keys = new FileKeys();
  try {
    const reader = await reopen();
    try {
      for await (const outcome of reader) {
        if (outcome.kind === 'row') keys.add(keyOf(outcome.record), outcome.line, policy === 'sum' ? outcome.record : undefined);
      }
    } finally {
      reader.close();
    }
    return keys.decide(policy);
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
