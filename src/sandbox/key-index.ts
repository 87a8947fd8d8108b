/**
 * The business-key index of a table: the row holding a key. Rows carry their own key, so the index stores only a
 * hash and the row per slot; an entry is found again by the key its row had when it was indexed (see remove()).
 *
 * Why not a Map: on the bulk path almost every lookup is a miss (a new transaction id), and a Map with a million
 * string keys answers a miss by walking a bucket chain whose every step loads an entry and then the candidate key
 * string from somewhere in a heap of hundreds of megabytes: about a microsecond per lookup on the benchmark machine,
 * a sixth of a bulk row's cost. Here a lookup reads a typed array of 32-bit hashes (open addressing, linear probing,
 * load at most one half) and touches a key only when its hash matches, so a miss is usually a single cache line.
 * The slot a missed lookup ended on is remembered, so inserting that same key right after (the bulk path) does not
 * probe again.
 *
 * Memory: 12 bytes a slot (a hash and the row), 2 to 4 slots a key: 24 to 48 bytes per key (a Map: 28 to 56).
 */

const EMPTY = 0;
const DELETED = 1;
const MIN_CAPACITY = 16;

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

interface Keyed {
  readonly key: string | null;
}

export class KeyIndex<V extends Keyed> {
  #hashes = new Int32Array(MIN_CAPACITY);
  #values: (V | undefined)[] = new Array<V | undefined>(MIN_CAPACITY).fill(undefined);
  #mask = MIN_CAPACITY - 1;
  #size = 0;
  /** Slots holding a key or a tombstone. */
  #used = 0;
  /** The key of the last missed get() and where it would go; cleared by every change. */
  #missKey: string | undefined = undefined;
  #missHash = 0;
  #missSlot = -1;

  get size(): number {
    return this.#size;
  }

  get(key: string): V | undefined {
    const hash = hashOf(key);
    const hashes = this.#hashes;
    const mask = this.#mask;
    let free = -1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const h = hashes[slot]!;
      if (h === EMPTY) {
        this.#missKey = key;
        this.#missHash = hash;
        this.#missSlot = free < 0 ? slot : free;
        return undefined;
      }
      if (h === hash && this.#values[slot]!.key === key) return this.#values[slot];
      if (h === DELETED && free < 0) free = slot;
    }
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** Indexes `value` under its key, replacing the row that held that key. */
  set(value: V & { readonly key: string }): void {
    const key = value.key;
    if (key === this.#missKey && this.#used < (this.#mask + 1) >>> 1) {
      // The slot the last get() of this key ended on; nothing changed since.
      this.#put(this.#missSlot, this.#missHash, value);
      return;
    }
    const hash = hashOf(key);
    const slot = this.#find(hash, (v) => v.key === key);
    if (slot >= 0) this.#values[slot] = value;
    else {
      if (this.#used + 1 > (this.#mask + 1) >>> 1) this.#rebuild();
      this.#put(this.#freeSlot(hash), hash, value);
    }
  }

  /**
   * Removes `value`'s entry, found by `key`: the key the row had when it was indexed, which is no longer its key
   * when a write has just changed it. Returns false when the row was not indexed under that key.
   */
  remove(key: string, value: V): boolean {
    const slot = this.#find(hashOf(key), (v) => v === value);
    if (slot < 0) return false;
    this.#missKey = undefined;
    this.#hashes[slot] = DELETED;
    this.#values[slot] = undefined;
    this.#size -= 1;
    return true;
  }

  #put(slot: number, hash: number, value: V): void {
    this.#missKey = undefined;
    if (this.#hashes[slot] === EMPTY) this.#used += 1;
    this.#hashes[slot] = hash;
    this.#values[slot] = value;
    this.#size += 1;
  }

  /** The slot with this hash whose row passes `test`, or -1. */
  #find(hash: number, test: (value: V) => boolean): number {
    const hashes = this.#hashes;
    const mask = this.#mask;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const h = hashes[slot]!;
      if (h === EMPTY) return -1;
      if (h === hash && test(this.#values[slot]!)) return slot;
    }
  }

  /** The first empty or deleted slot on the probe path of `hash` (the key is known to be absent). */
  #freeSlot(hash: number): number {
    const hashes = this.#hashes;
    const mask = this.#mask;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const h = hashes[slot]!;
      if (h === EMPTY || h === DELETED) return slot;
    }
  }

  /** Re-inserts every entry (tombstones dropped) into a table they fill a quarter to a half of. */
  #rebuild(): void {
    const hashes = this.#hashes;
    const values = this.#values;
    let capacity = MIN_CAPACITY;
    while (capacity < (this.#size + 1) * 2) capacity *= 2;
    this.#hashes = new Int32Array(capacity);
    this.#values = new Array<V | undefined>(capacity).fill(undefined);
    this.#mask = capacity - 1;
    this.#used = this.#size;
    this.#missKey = undefined;
    for (let old = 0; old < hashes.length; old += 1) {
      const hash = hashes[old]!;
      if (hash === EMPTY || hash === DELETED) continue;
      const slot = this.#freeSlot(hash);
      this.#hashes[slot] = hash;
      this.#values[slot] = values[old];
    }
  }
}
