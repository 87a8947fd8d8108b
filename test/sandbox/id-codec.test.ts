import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EntityTable, type TableRow } from '../../src/sandbox/entity-table.ts';
import { UuidCodec } from '../../src/sandbox/id-codec.ts';
import { Prng } from '../../src/sandbox/prng.ts';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('UUID-shaped serial ids', () => {
  it('round-trips every 48-bit serial and looks like a v4 UUID', () => {
    const codec = new UuidCodec(new Prng(3, 'ids'));
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 48 - 1 }), (serial) => {
        const id = codec.encode(serial);
        expect(id).toMatch(UUID_V4);
        expect(codec.decode(id)).toBe(serial);
      }),
    );
    expect(codec.encode(1)).not.toBe(codec.encode(2));
    expect(codec.decode('00000000-0000-4000-8000-000000000001')).toBeNull();
  });
});

interface Row extends TableRow {
  readonly id: string;
}

describe('EntityTable', () => {
  const row = (id: string, key: string | null): Row => ({ id, key, seq: 0, updatedAt: 0 });

  it('keeps a client id that looks like one of its own apart, and never issues it', () => {
    const codec = new UuidCodec(new Prng(3, 'ids'));
    const table = new EntityTable<Row>(codec);
    const future = codec.encode(2);
    table.insert(row(future, 'client'), 1);
    const first = table.issueId();
    const second = table.issueId();
    expect(first).toBe(codec.encode(1));
    expect(second).toBe(codec.encode(3));
    table.insert(row(first, 'a'), 2);
    expect(table.getById(future)?.key).toBe('client');
    expect(table.getById(first)?.key).toBe('a');
    expect(table.size).toBe(2);
  });

  it('lists in write order through compaction, with stable cursors', () => {
    const table = new EntityTable<Row>(new UuidCodec(new Prng(3, 'ids')));
    const rows = Array.from({ length: 10_000 }, (_, i) => row(table.issueId(), `k${i}`));
    for (const r of rows) table.insert(r, 1);
    const page = table.page({ limit: 100, after: null, updatedAfter: null });
    // Rewrite every row but the first 100 twice: the stale entries are compacted away.
    for (let pass = 0; pass < 2; pass += 1) for (const r of rows.slice(100)) table.update(r, 2, r.key);
    const rest: Row[] = [];
    let after = page.nextAfter;
    while (after !== null) {
      const next = table.page({ limit: 1000, after, updatedAfter: null });
      rest.push(...next.rows);
      after = next.nextAfter;
    }
    expect(page.rows.map((r) => r.key)).toEqual(rows.slice(0, 100).map((r) => r.key));
    expect(rest.map((r) => r.key)).toEqual(rows.slice(100).map((r) => r.key));
    expect(table.page({ limit: 20_000, after: null, updatedAfter: 2 }).rows).toHaveLength(9900);
  });
});
