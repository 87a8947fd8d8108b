/**
 * A string column gives back exactly the strings it was given (ASCII, any Unicode, lone surrogates, empty, null),
 * through rewrites, clears and compactions: checked on random operation sequences (fast-check) against an array.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StringColumn } from '../../src/sandbox/string-column.ts';

const value = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }), // any UTF-16 code units, lone surrogates included
  fc.constantFrom('', 'T-1', 'é', '\ud800', 'a\udc00b', '😀', '2026-11-20T10:00:12Z'),
  fc.constant(null),
);

describe('StringColumn', () => {
  it('returns what was set, through rewrites, clears and compactions', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat({ max: 3000 }), value), { minLength: 1, maxLength: 400 }), fc.nat({ max: 20 }), (ops, repeat) => {
        const column = new StringColumn();
        const model: (string | null)[] = [];
        // Repeating the sequence rewrites the same slots, so unused bytes pile up and the buffer is compacted.
        for (let round = 0; round <= repeat; round += 1) {
          for (const [slot, v] of ops) {
            const rewritten = round % 2 === 1 && v !== null ? `${v}~${round}` : v;
            column.set(slot, rewritten);
            model[slot] = rewritten;
          }
        }
        // Every slot checked, the mismatches gathered and asserted once: an expect per slot (thousands a run) took
        // most of this test's time.
        const wrong: string[] = [];
        for (let slot = 0; slot <= 3001; slot += 1) {
          const expected = model[slot] ?? null;
          const got = column.get(slot);
          if (got !== expected) wrong.push(`get(${slot}) is ${JSON.stringify(got)}, not ${JSON.stringify(expected)}`);
          if (expected !== null) {
            if (!column.equals(slot, expected)) wrong.push(`equals(${slot}, ${JSON.stringify(expected)}) is false`);
            if (column.equals(slot, `${expected}x`)) wrong.push(`equals(${slot}, ${JSON.stringify(`${expected}x`)}) is true`);
          } else if (column.equals(slot, '')) wrong.push(`equals(${slot}, "") is true for an unset slot`);
        }
        expect(wrong).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });

  it('keeps its size proportional to the strings it holds when they are rewritten again and again', () => {
    const column = new StringColumn();
    for (let round = 0; round < 50; round += 1) {
      for (let slot = 0; slot < 10_000; slot += 1) column.set(slot, `T${round}-${slot}-${'x'.repeat(20)}`);
    }
    const wrong = Array.from({ length: 10_000 }, (_, slot) => slot).filter((slot) => column.get(slot) !== `T49-${slot}-${'x'.repeat(20)}`);
    expect(wrong).toEqual([]);
    // 10,000 strings of ~30 bytes: a buffer of at most 4 x 300 kB (plus 12 bytes of bookkeeping a slot, doubled).
    expect(column.byteSize).toBeLessThan(4 * 300_000 + 2 * 12 * 16_384);
  });
});
