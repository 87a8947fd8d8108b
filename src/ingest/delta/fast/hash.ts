/**
 * The hashes of delta push: MurmurHash3 (x86, 32-bit) over a string's UTF-16 code units, two code units per block,
 * run with independent seeds to make 64 and 96 bits. Not cryptographic: the inputs are a retailer's own keys and
 * rows, and what matters is that distinct inputs almost never share a hash (about 1 in 2^64 per pair), at a fraction
 * of a microsecond per row (node:crypto costs ~2 µs a call, more than reading the row).
 *
 * A 64-bit value is carried as two unsigned 32-bit halves and stored as one signed 64-bit integer (toSigned64), the
 * order SQLite and PostgreSQL sort it in; compareHashes orders the halves the same way.
 *
 * The comparison hashes every row of a file, so Hash64Stream runs both seeds side by side in one pass (a block is
 * scrambled once, then mixed into each seed's state: MurmurHash3's block scramble does not depend on the seed), over
 * a text fed in pieces (no string built), into reused state (no object per hash). It equals hash64, which stays the
 * definition (test/delta/delta-units.test.ts).
 */

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/** A 32-bit block scrambled: the seed-independent half of a MurmurHash3 round. */
function scramble(k: number): number {
  k = Math.imul(k, C1);
  k = (k << 15) | (k >>> 17);
  return Math.imul(k, C2);
}

/** A scrambled block mixed into one seed's state. */
function step(h: number, k: number): number {
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

function mix(h: number, k: number): number {
  return step(h, scramble(k));
}

function finish(h: number, length: number): number {
  h ^= length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** MurmurHash3_x86_32 of the UTF-16 code units of `text` (two units per 32-bit block), unsigned. */
export function murmur32(text: string, seed: number): number {
  let h = seed | 0;
  const n = text.length;
  const pairs = n & ~1;
  for (let i = 0; i < pairs; i += 2) h = mix(h, text.charCodeAt(i) | (text.charCodeAt(i + 1) << 16));
  if (pairs < n) {
    let k = Math.imul(text.charCodeAt(pairs), C1);
    k = (k << 15) | (k >>> 17);
    h ^= Math.imul(k, C2);
  }
  return finish(h, n);
}

/** A 64-bit hash as its high and low unsigned 32-bit halves. */
export interface Hash64 {
  readonly hi: number;
  readonly lo: number;
}

const SEED_HI = 0x9747b28c;
const SEED_LO = 0x2f1a8e53;

export function hash64(text: string): Hash64 {
  return { hi: murmur32(text, SEED_HI), lo: murmur32(text, SEED_LO) };
}

/**
 * hash64 of a text given in pieces (`begin`, `add` each, `finish`), without building the text: the content hash of a
 * row (canonical.ts) streams its fields' names and values. An instance is reused from one text to the next.
 */
export class Hash64Stream {
  hi = 0;
  lo = 0;
  #a = SEED_HI;
  #b = SEED_LO;
  /** The first code unit of a block whose second is in the next piece, or -1. */
  #pending = -1;
  #length = 0;

  begin(): void {
    this.#a = SEED_HI;
    this.#b = SEED_LO;
    this.#pending = -1;
    this.#length = 0;
  }

  add(text: string): void {
    const n = text.length;
    if (n === 0) return;
    let a = this.#a;
    let b = this.#b;
    let i = 0;
    if (this.#pending >= 0) {
      const k = scramble(this.#pending | (text.charCodeAt(0) << 16));
      a = step(a, k);
      b = step(b, k);
      i = 1;
    }
    const end = i + ((n - i) & ~1);
    for (; i < end; i += 2) {
      const k = scramble(text.charCodeAt(i) | (text.charCodeAt(i + 1) << 16));
      a = step(a, k);
      b = step(b, k);
    }
    this.#pending = i < n ? text.charCodeAt(i) : -1;
    this.#a = a;
    this.#b = b;
    this.#length += n;
  }

  /**
   * `add` of ASCII bytes [start, end) (each byte one code unit): the same as `add` of their text, without making it.
   * The caller knows the bytes are ASCII (a byte from 0x80 on would be hashed as a code unit of its own).
   */
  addBytes(bytes: Uint8Array, start: number, end: number): void {
    if (end <= start) return;
    let a = this.#a;
    let b = this.#b;
    let i = start;
    if (this.#pending >= 0) {
      const k = scramble(this.#pending | ((bytes[i] as number) << 16));
      a = step(a, k);
      b = step(b, k);
      i += 1;
    }
    const stop = i + ((end - i) & ~1);
    for (; i < stop; i += 2) {
      const k = scramble((bytes[i] as number) | ((bytes[i + 1] as number) << 16));
      a = step(a, k);
      b = step(b, k);
    }
    this.#pending = i < end ? (bytes[i] as number) : -1;
    this.#a = a;
    this.#b = b;
    this.#length += end - start;
  }

  /** Ends the text: `hi` and `lo` are hash64 of it. */
  finish(): void {
    let a = this.#a;
    let b = this.#b;
    if (this.#pending >= 0) {
      const k = scramble(this.#pending);
      a ^= k;
      b ^= k;
    }
    this.hi = finish(a, this.#length);
    this.lo = finish(b, this.#length);
  }
}

/** The signed 64-bit integer the state stores for a hash (its sort order is compareHashes'). */
export function toSigned64(hi: number, lo: number): bigint {
  return BigInt.asIntN(64, (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0));
}

export function fromSigned64(value: bigint): Hash64 {
  const unsigned = BigInt.asUintN(64, value);
  return { hi: Number(unsigned >> 32n), lo: Number(unsigned & 0xffffffffn) };
}

/** Orders hashes as their signed 64-bit values sort (the high half signed, the low half unsigned). */
export function compareHashes(aHi: number, aLo: number, bHi: number, bLo: number): number {
  const ah = aHi | 0;
  const bh = bHi | 0;
  if (ah !== bh) return ah < bh ? -1 : 1;
  const al = aLo >>> 0;
  const bl = bLo >>> 0;
  return al === bl ? 0 : al < bl ? -1 : 1;
}

/**
 * hash64 of the cells `cells` of `fields` (an absent one as empty), each written as its length in two code units (low
 * and high 16 bits) followed by its code units, into `out`, without building that text (the line hash of every row of
 * a file: line-hash.ts). The lengths make it one text per list of cells, whatever they hold.
 */
export function hashCells(fields: readonly string[], cells: readonly number[], out: { hi: number; lo: number }): void {
  let a = SEED_HI;
  let b = SEED_LO;
  /** The first code unit of a block whose second is still to come, or -1. */
  let pending = -1;
  let length = 0;
  for (let c = 0; c < cells.length; c++) {
    const text = fields[cells[c] as number] ?? '';
    const n = text.length;
    // The length's two units: they complete a pending block and fill one, or fill one and leave the high one pending.
    const low = n & 0xffff;
    const high = n >>> 16;
    if (pending >= 0) {
      const k = scramble(pending | (low << 16));
      a = step(a, k);
      b = step(b, k);
      pending = high;
    } else {
      const k = scramble(low | (high << 16));
      a = step(a, k);
      b = step(b, k);
    }
    let i = 0;
    if (pending >= 0 && n > 0) {
      const k = scramble(pending | (text.charCodeAt(0) << 16));
      a = step(a, k);
      b = step(b, k);
      pending = -1;
      i = 1;
    }
    const end = i + ((n - i) & ~1);
    for (; i < end; i += 2) {
      const k = scramble(text.charCodeAt(i) | (text.charCodeAt(i + 1) << 16));
      a = step(a, k);
      b = step(b, k);
    }
    if (i < n) pending = text.charCodeAt(i);
    length += n + 2;
  }
  if (pending >= 0) {
    const k = scramble(pending);
    a ^= k;
    b ^= k;
  }
  out.hi = finish(a, length);
  out.lo = finish(b, length);
}

/**
 * hashCells of cells given as byte ranges of an ASCII line: cell `c` is `bytes[starts[c], ends[c])`, every byte below
 * 0x80, so each byte is the code unit hashCells reads (delta push's first pass reads most lines as bytes:
 * line-scan.ts). Equal to hashCells of the cells' text (test/delta/delta-units.test.ts); a line holding any other byte
 * is hashed as text.
 */
export function hashByteCells(bytes: Uint8Array, starts: Int32Array, ends: Int32Array, cells: readonly number[], out: { hi: number; lo: number }): void {
  let a = SEED_HI;
  let b = SEED_LO;
  /** The first code unit of a block whose second is still to come, or -1. */
  let pending = -1;
  let length = 0;
  for (let c = 0; c < cells.length; c++) {
    const cell = cells[c] as number;
    let i = starts[cell] as number;
    const stop = ends[cell] as number;
    const n = stop - i;
    // The length's two units, as hashCells writes them.
    const low = n & 0xffff;
    const high = n >>> 16;
    if (pending >= 0) {
      const k = scramble(pending | (low << 16));
      a = step(a, k);
      b = step(b, k);
      pending = high;
    } else {
      const k = scramble(low | (high << 16));
      a = step(a, k);
      b = step(b, k);
    }
    if (pending >= 0 && i < stop) {
      const k = scramble(pending | ((bytes[i] as number) << 16));
      a = step(a, k);
      b = step(b, k);
      pending = -1;
      i += 1;
    }
    const end = i + ((stop - i) & ~1);
    for (; i < end; i += 2) {
      const k = scramble((bytes[i] as number) | ((bytes[i + 1] as number) << 16));
      a = step(a, k);
      b = step(b, k);
    }
    if (i < stop) pending = bytes[i] as number;
    length += n + 2;
  }
  if (pending >= 0) {
    const k = scramble(pending);
    a ^= k;
    b ^= k;
  }
  out.hi = finish(a, length);
  out.lo = finish(b, length);
}
