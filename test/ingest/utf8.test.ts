import { isUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findInvalidUtf8, incompleteTailLength } from '../../src/ingest/read/utf8.ts';

describe('findInvalidUtf8', () => {
  it.each([
    [[0x41, 0xc3, 0xa4], -1],
    [[0x41, 0xe4, 0x6c], 1], // Latin-1 ä in UTF-8 text
    [[0xc0, 0x80], 0], // overlong
    [[0xed, 0xa0, 0x80], 0], // surrogate
    [[0xf4, 0x90, 0x80, 0x80], 0], // above U+10FFFF
    [[0x41, 0xe2, 0x82], 1], // truncated
    [[0x80], 0],
  ])('%j -> %i', (bytes, expected) => {
    expect(findInvalidUtf8(Uint8Array.from(bytes))).toBe(expected);
  });

  it('agrees with the native validator on random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 24 }), (bytes) => {
        expect(findInvalidUtf8(bytes) === -1).toBe(isUtf8(bytes));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('incompleteTailLength', () => {
  it.each([
    [[0x41], 0],
    [[0x41, 0xe2], 1],
    [[0x41, 0xe2, 0x82], 2],
    [[0xe2, 0x82, 0xac], 0],
    [[0xf0, 0x9f, 0x98], 3],
    [[0x41, 0xff], 0], // not a lead byte: left for validation to refuse
  ])('%j -> %i', (bytes, expected) => {
    expect(incompleteTailLength(Uint8Array.from(bytes))).toBe(expected);
  });
});
