/**
 * Internal ids the sandbox hands out, as encodings of a dense serial number (1, 2, 3, ...), so that a table finds a
 * row by id in an array slot instead of a million-entry Map (one hash-table insert less per bulk row, and no map
 * entry held per row).
 *
 * UUID ids look like any v4 UUID: a per-table random prefix of 24 characters (with the version and variant
 * nibbles) followed by 12 hex digits of the serial passed through a keyed 4-round Feistel permutation of 48 bits,
 * so consecutive rows do not get consecutive-looking ids. Clients must treat ids as opaque. Integer ids
 * (competitor prices) are the serial itself.
 */
import type { Prng } from './prng.ts';

export interface IdCodec<Id extends string | number> {
  encode(serial: number): Id;
  /** The serial behind `id`, or null when `id` is not one of this codec's encodings. */
  decode(id: Id): number | null;
}

export const integerIds: IdCodec<number> = {
  encode: (serial) => serial,
  decode: (id) => (Number.isSafeInteger(id) && id > 0 ? id : null),
};

const MASK24 = 0xffffff;
const TWO_24 = 0x1000000;
const HEX_CODES: readonly number[] = Array.from({ length: 16 }, (_, i) => i.toString(16).charCodeAt(0));
/** Value of a lowercase hex digit by char code; -1 for anything else. */
const HEX_VALUE = new Int8Array(128).fill(-1);
HEX_CODES.forEach((code, value) => {
  HEX_VALUE[code] = value;
});

function mix(half: number, key: number): number {
  let h = Math.imul(half ^ key, 0x9e3779b1);
  h ^= h >>> 15;
  h = Math.imul(h, 0x85ebca77);
  h ^= h >>> 13;
  return h & MASK24;
}

export class UuidCodec implements IdCodec<string> {
  readonly #prefix: string;
  readonly #keys: readonly number[];
  readonly #buffer: Buffer;

  constructor(prng: Prng) {
    const sample = prng.uuid(); // a v4 UUID: its first 24 characters carry the version and variant
    this.#prefix = sample.slice(0, 24);
    this.#keys = [prng.next(), prng.next(), prng.next(), prng.next()];
    this.#buffer = Buffer.from(sample, 'latin1');
  }

  encode(serial: number): string {
    let hi = Math.floor(serial / TWO_24) & MASK24;
    let lo = serial & MASK24;
    for (const key of this.#keys) {
      const next = hi ^ mix(lo, key);
      hi = lo;
      lo = next;
    }
    const out = this.#buffer;
    for (let i = 0; i < 6; i += 1) {
      out[24 + i] = HEX_CODES[(hi >>> (20 - 4 * i)) & 15]!;
      out[30 + i] = HEX_CODES[(lo >>> (20 - 4 * i)) & 15]!;
    }
    return out.toString('latin1', 0, 36);
  }

  decode(id: string): number | null {
    if (id.length !== 36 || !id.startsWith(this.#prefix)) return null;
    let hi = 0;
    let lo = 0;
    for (let i = 0; i < 6; i += 1) {
      const h = HEX_VALUE[id.charCodeAt(24 + i)] ?? -1;
      const l = HEX_VALUE[id.charCodeAt(30 + i)] ?? -1;
      if (h < 0 || l < 0) return null;
      hi = (hi << 4) | h;
      lo = (lo << 4) | l;
    }
    for (let k = this.#keys.length - 1; k >= 0; k -= 1) {
      const previous = lo ^ mix(hi, this.#keys[k]!);
      lo = hi;
      hi = previous;
    }
    return hi * TWO_24 + lo;
  }
}
