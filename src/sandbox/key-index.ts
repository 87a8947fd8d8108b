/**
 * The business-key index of a table: key -> the slot of the row holding it (a non-zero 32-bit integer the table
 * gives its rows; 0 means "none"). The keys themselves stay with the rows: when a hash matches, the index asks the
 * table whether that slot's row has the key (`hasKey`), so it holds no string and no object, only integers.
 *
 * Why not a Map: on the bulk path almost every lookup is a miss (a new transaction id), and a Map with a million
 * string keys answers a miss by walking a bucket chain whose every step loads an entry and then the candidate key
 * string from somewhere in a heap of hundreds of megabytes: about a microsecond per lookup on the benchmark machine.
 * Here the table is one Int32Array of (hash, slot) pairs, open addressing with linear probing at a load of at most
 * one half, so a miss usually reads a single cache line, and the garbage collector has nothing to trace in it.
 * The pair a missed lookup ended on is remembered, so inserting that same key right after (the bulk path) does not
 * probe again.
 *
 * Memory: 8 bytes a pair, 2 to 4 pairs a key: 16 to 32 bytes per key (a Map: 28 to 56, plus the GC's work).
 */

const EMPTY = 0;
const DELETED = 1;
const MIN_PAIRS = 16;

/** A 32-bit hash of the UTF-16 code units (FNV-1a with a murmur finalizer), never EMPTY or DELETED. */
function hashOf(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i += 1) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h === EMPTY || h === DELETED ? h + 2 : h;
}

export class KeyIndex {
  readonly #hasKey: (slot: number, key: string) => boolean;
  /** Pair p: hash at 2p, slot at 2p + 1. */
  #pairs = new Int32Array(2 * MIN_PAIRS);
  #mask = MIN_PAIRS - 1;
  #size = 0;
  /** Pairs holding a key or a tombstone. */
  #used = 0;
  /** The key of the last missed get() and the pair it would go in; cleared by every change. */
  #missKey: string | null = null;
  #missHash = 0;
  #missPair = -1;

  /** `hasKey(slot, key)`: whether the row in `slot` has `key` as its current key. */
  constructor(hasKey: (slot: number, key: string) => boolean) {
    this.#hasKey = hasKey;
  }

  get size(): number {
    return this.#size;
  }

  /** The slot of the row holding `key`, or 0. */
  get(key: string): number {
    const hash = hashOf(key);
    const pairs = this.#pairs;
    const mask = this.#mask;
    let free = -1;
    for (let p = hash & mask; ; p = (p + 1) & mask) {
      const h = pairs[2 * p]!;
      if (h === EMPTY) {
        this.#missKey = key;
        this.#missHash = hash;
        this.#missPair = free < 0 ? p : free;
        return 0;
      }
      if (h === hash && this.#hasKey(pairs[2 * p + 1]!, key)) return pairs[2 * p + 1]!;
      if (h === DELETED && free < 0) free = p;
    }
  }

  /** Indexes the row in `slot` under `key` (its current key), replacing the row that held that key. */
  set(key: string, slot: number): void {
    if (key === this.#missKey && this.#used < (this.#mask + 1) >>> 1) {
      // The pair the last get() of this key ended on; nothing changed since.
      this.#put(this.#missPair, this.#missHash, slot);
      return;
    }
    const hash = hashOf(key);
    const found = this.#find(hash, key, -1);
    if (found >= 0) this.#pairs[2 * found + 1] = slot;
    else {
      if (this.#used + 1 > (this.#mask + 1) >>> 1) this.#rebuild();
      this.#put(this.#freePair(hash), hash, slot);
    }
  }

  /**
   * Removes the entry of the row in `slot`, found by `key`: the key the row had when it was indexed, which is no
   * longer its key when a write has just changed it. Returns false when the row was not indexed under that key.
   */
  remove(key: string, slot: number): boolean {
    const p = this.#find(hashOf(key), null, slot);
    if (p < 0) return false;
    this.#missKey = null;
    this.#pairs[2 * p] = DELETED;
    this.#pairs[2 * p + 1] = 0;
    this.#size -= 1;
    return true;
  }

  #put(p: number, hash: number, slot: number): void {
    this.#missKey = null;
    if (this.#pairs[2 * p] === EMPTY) this.#used += 1;
    this.#pairs[2 * p] = hash;
    this.#pairs[2 * p + 1] = slot;
    this.#size += 1;
  }

  /** The pair with this hash holding `key` (when `key` is not null) or else `slot`; -1 when there is none. */
  #find(hash: number, key: string | null, slot: number): number {
    const pairs = this.#pairs;
    const mask = this.#mask;
    for (let p = hash & mask; ; p = (p + 1) & mask) {
      const h = pairs[2 * p]!;
      if (h === EMPTY) return -1;
      if (h === hash && (key === null ? pairs[2 * p + 1] === slot : this.#hasKey(pairs[2 * p + 1]!, key))) return p;
    }
  }

  /** The first empty or deleted pair on the probe path of `hash` (the key is known to be absent). */
  #freePair(hash: number): number {
    const pairs = this.#pairs;
    const mask = this.#mask;
    for (let p = hash & mask; ; p = (p + 1) & mask) {
      const h = pairs[2 * p]!;
      if (h === EMPTY || h === DELETED) return p;
    }
  }

  /** Re-inserts every entry (tombstones dropped) into a table they fill a quarter to a half of. */
  #rebuild(): void {
    const old = this.#pairs;
    let capacity = MIN_PAIRS;
    while (capacity < (this.#size + 1) * 2) capacity *= 2;
    this.#pairs = new Int32Array(2 * capacity);
    this.#mask = capacity - 1;
    this.#used = this.#size;
    this.#missKey = null;
    for (let q = 0; q < old.length; q += 2) {
      const hash = old[q]!;
      if (hash === EMPTY || hash === DELETED) continue;
      const p = this.#freePair(hash);
      this.#pairs[2 * p] = hash;
      this.#pairs[2 * p + 1] = old[q + 1]!;
    }
  }
}
