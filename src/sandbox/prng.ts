/**
 * A small seeded pseudo-random generator (sfc32, seeded through splitmix32) and the random values the sandbox needs:
 * UUIDs, API keys, decimal strings. Math.random is never used: the same seed must give the same data (ids, keys,
 * approvals, faults) on every run and every machine.
 *
 * Several independent streams are derived from one seed (data, ids, faults), so that turning faults on does not
 * change the ids the next bulk request is given.
 */

const HEX_CODES: readonly number[] = Array.from({ length: 16 }, (_, i) => i.toString(16).charCodeAt(0));
/** Scratch space of uuid(); the dashes stay in place. */
const UUID_BUFFER = Buffer.alloc(36, '-');
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Named streams: each gets its own generator from the same seed. */
/** `chaos` is the chaos suite's timeline (test/chaos), kept apart from the sandbox's own streams. */
export const PRNG_STREAMS = { data: 1, ids: 2, faults: 3, keys: 4, chaos: 5 } as const;
export type PrngStream = keyof typeof PRNG_STREAMS;

function splitmix32(state: number): () => number {
  let s = state >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

export class Prng {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  constructor(seed: number, stream: PrngStream | number = 0) {
    const streamNo = typeof stream === 'number' ? stream : PRNG_STREAMS[stream];
    const mix = splitmix32((Math.trunc(seed) ^ Math.imul(streamNo + 1, 0x27d4eb2d)) >>> 0);
    this.#a = mix();
    this.#b = mix();
    this.#c = mix();
    this.#d = mix();
    // Warm up: the first outputs of sfc32 are weakly mixed.
    for (let i = 0; i < 12; i += 1) this.next();
  }

  /** A uniformly distributed unsigned 32-bit integer. */
  next(): number {
    const t = (((this.#a + this.#b) >>> 0) + this.#d) >>> 0;
    this.#d = (this.#d + 1) >>> 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) >>> 0;
    this.#c = ((this.#c << 21) | (this.#c >>> 11)) >>> 0;
    this.#c = (this.#c + t) >>> 0;
    return t;
  }

  /** A float in [0, 1). */
  float(): number {
    return this.next() / 4294967296;
  }

  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.float() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.float() < probability;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.float() * items.length)];
    if (item === undefined) throw new Error('Prng.pick: empty list');
    return item;
  }

  /**
   * A version-4 UUID (random bits from this stream). Written into a byte buffer and sliced once: a UUID glued from
   * 20 pieces is a deep cons-string that costs microseconds to flatten when it is first used as a Map key, which
   * dominated bulk ingest.
   */
  uuid(): string {
    const out = UUID_BUFFER;
    let pos = 0;
    for (let word = 0; word < 4; word += 1) {
      let value = this.next();
      if (word === 1) value = (value & 0xffff0fff) | 0x00004000; // version 4
      if (word === 2) value = (value & 0x3fffffff) | 0x80000000; // variant 10
      for (let shift = 28; shift >= 0; shift -= 4) {
        if (pos === 8 || pos === 13 || pos === 18 || pos === 23) pos += 1;
        out[pos] = HEX_CODES[(value >>> shift) & 15]!;
        pos += 1;
      }
    }
    return out.toString('latin1', 0, 36);
  }

  /** `length` characters of [0-9A-Za-z]. */
  token(length: number): string {
    let out = '';
    for (let i = 0; i < length; i += 1) out += BASE62[this.next() % 62];
    return out;
  }

  /** A decimal string with two places in [minCents, maxCents] / 100, computed in integer cents. */
  price(minCents: number, maxCents: number): string {
    return centsToDecimal(this.int(minCents, maxCents));
  }
}

/** 1234 -> "12.34"; integer arithmetic only, so no float ever touches a price. */
export function centsToDecimal(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(Math.trunc(cents));
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}
