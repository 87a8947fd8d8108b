/**
 * The key index must answer like a Map from key to row, through growth, deletions (tombstones) and rows whose key
 * changes after they were indexed: checked on random operation sequences (fast-check) against a Map model. Row n
 * is in slot n + 1 (slot 0 means "none").
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyIndex } from '../../src/sandbox/key-index.ts';

interface Row {
  key: string | null;
  readonly n: number;
}

/** An index over `rows` (row n in slot n + 1), and a lookup that answers with the row. */
function indexOf(rows: Row[]) {
  const index = new KeyIndex((slot, key) => rows[slot - 1]?.key === key);
  const find = (key: string): Row | undefined => {
    const slot = index.get(key);
    return slot === 0 ? undefined : rows[slot - 1];
  };
  return { index, find };
}

type Op =
  | { readonly kind: 'get'; readonly key: string }
  | { readonly kind: 'insert'; readonly key: string }
  | { readonly kind: 'add'; readonly key: string }
  | { readonly kind: 'remove'; readonly pick: number }
  | { readonly kind: 'rekey'; readonly pick: number; readonly key: string };

// Few distinct keys, so sequences revisit them; the long ones share a prefix, the empty one is allowed.
const key = fc.oneof(fc.constantFrom('', 'a', 'b', 'T-1', 'T-2', '\u0001'), fc.nat({ max: 40 }).map((n) => `T0000051-${n}`));
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('get' as const), key }),
  fc.record({ kind: fc.constant('insert' as const), key }),
  fc.record({ kind: fc.constant('add' as const), key }),
  fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('rekey' as const), pick: fc.nat(), key }),
);

describe('KeyIndex', () => {
  it('agrees with a Map through inserts, misses, removals, key changes and growth', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 600 }), (ops) => {
        const rows: Row[] = [];
        const { index, find } = indexOf(rows);
        const model = new Map<string, Row>();
        for (const o of ops) {
          switch (o.kind) {
            case 'get':
              expect(find(o.key)).toBe(model.get(o.key));
              break;
            case 'insert': {
              // As EntityTable.insert: a lookup first (the bulk path), then the row is indexed if the key is free.
              const holder = find(o.key);
              expect(holder).toBe(model.get(o.key));
              const row: Row = { key: o.key, n: rows.length };
              rows.push(row);
              if (holder === undefined) {
                index.set(o.key, row.n + 1);
                model.set(o.key, row);
              }
              break;
            }
            case 'add': {
              // A set() with no lookup of its own just before: whatever an earlier missed get() remembered must
              // not be used for this key.
              if (model.has(o.key)) break;
              const row: Row = { key: o.key, n: rows.length };
              rows.push(row);
              index.set(o.key, row.n + 1);
              model.set(o.key, row);
              break;
            }
            case 'remove': {
              // As EntityTable.delete.
              const row = rows[o.pick % Math.max(1, rows.length)];
              if (row === undefined || row.key === null) break;
              const indexed = model.get(row.key) === row;
              expect(index.remove(row.key, row.n + 1)).toBe(indexed);
              if (indexed) model.delete(row.key);
              row.key = null;
              break;
            }
            case 'rekey': {
              // As EntityTable.update after an assign changed the row's key.
              const row = rows[o.pick % Math.max(1, rows.length)];
              if (row === undefined || row.key === null || row.key === o.key) break;
              const previous = row.key;
              row.key = o.key;
              const indexed = model.get(previous) === row;
              expect(index.remove(previous, row.n + 1)).toBe(indexed);
              if (indexed) model.delete(previous);
              if (index.get(o.key) === 0) {
                expect(model.has(o.key)).toBe(false);
                index.set(o.key, row.n + 1);
                model.set(o.key, row);
              }
              break;
            }
          }
          expect(index.size).toBe(model.size);
        }
        for (const [k, row] of model) expect(find(k)).toBe(row);
      }),
      { numRuns: 300 },
    );
  });

  it('does not reuse the slot a missed lookup ended on once another key took it', () => {
    // Every pair of 40 keys: in a fresh (16-slot) index some pairs share a home slot.
    const keys = Array.from({ length: 40 }, (_, n) => `k${n}`);
    for (const k of keys) {
      for (const a of keys) {
        if (a === k) continue;
        const rowA = { key: a, n: 0 };
        const rowK = { key: k, n: 1 };
        const { index, find } = indexOf([rowA, rowK]);
        expect(index.get(k)).toBe(0);
        index.set(a, 1);
        index.set(k, 2);
        expect([index.size, find(a), find(k)]).toEqual([2, rowA, rowK]);
      }
    }
  });

  it('holds a million keys and finds each', () => {
    const rows: Row[] = [];
    const { index, find } = indexOf(rows);
    for (let n = 0; n < 1_000_000; n += 1) {
      const row = { key: `T${n}`, n };
      rows.push(row);
      if (index.get(row.key) !== 0) throw new Error(`T${n} found before it was added`);
      index.set(row.key, n + 1);
    }
    expect(index.size).toBe(1_000_000);
    for (let n = 0; n < 1_000_000; n += 7919) expect(find(`T${n}`)).toBe(rows[n]);
    expect(index.get('T1000000')).toBe(0);
  });
});
