/**
 * The pieces delta push's comparison rests on, pinned to plain definitions: the external sort against a plain sort
 * (property test, with runs small enough to spill and merge), the hashes' order against bigint order, the canonical
 * form's notion of "the same value", the price move and the verdicts' packing; a source's delta options and defaults.
 */
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BUSINESS_KEY_FIELDS, BUSINESS_KEY_PARTS, BUSINESS_KEYS, ENTITIES, KEY_PARTS_AS_IS } from '../../src/api/schemas/index.ts';
import { SourceSchema } from '../../src/config/source-schema.ts';
import { storedKeyHash } from '../../src/ingest/delta/compare.ts';
import { hashKey, hashKeyBytes } from '../../src/ingest/delta/fast/row-hash.ts';
import { canonicalDecimal, canonicalText, contentHash, priceMovePct } from '../../src/ingest/delta/fast/canonical.ts';
import { compareHashes, fromSigned64, hash64, Hash64Stream, hashByteCells, hashCells, murmur32, toSigned64 } from '../../src/ingest/delta/fast/hash.ts';
import { lineHashOf, lineSeed } from '../../src/ingest/delta/fast/line-hash.ts';
import { SortedRuns } from '../../src/ingest/delta/fast/sorted-runs.ts';
import { sourceDelta } from '../../src/ingest/delta/source-delta.ts';
import { VERDICT, Verdicts } from '../../src/ingest/delta/verdicts.ts';

describe('sorted runs', () => {
  it('yields every entry once, in (signed 64-bit key hash, line) order, through spills and a k-way merge', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pa-runs-'));
    const entry = fc.record({ keyHi: fc.nat(0xffffffff), keyLo: fc.nat(0xffffffff), price: fc.oneof(fc.constant(Number.NaN), fc.double({ noNaN: true })) });
    type Entry = { keyHi: number; keyLo: number; contentHi: number; contentLo: number; line: number; price: number };
    await fc.assert(
      fc.asyncProperty(fc.array(entry, { maxLength: 300 }), fc.integer({ min: 1, max: 40 }), async (entries, runSize) => {
        const runs = new SortedRuns(dir, runSize);
        // Few distinct keys as well as many: repeated keys must keep file order.
        const all: Entry[] = entries.map((e, i) => ({ ...e, keyHi: i % 3 === 0 ? 7 : e.keyHi, contentHi: i, contentLo: i * 2, line: i + 2 }));
        for (const e of all) await runs.add(e.keyHi, e.keyLo, e.contentHi, e.contentLo, e.line, e.price);
        const out: Entry[] = [];
        for await (const b of runs.blocks()) {
          for (let i = 0; i < b.size; i++) {
            out.push({ keyHi: b.keyHi[i] as number, keyLo: b.keyLo[i] as number, contentHi: b.contentHi[i] as number, contentLo: b.contentLo[i] as number, line: b.line[i] as number, price: b.price[i] as number });
          }
        }
        const expected = [...all].sort((a, b) => {
          const d = toSigned64(a.keyHi, a.keyLo) - toSigned64(b.keyHi, b.keyLo);
          return d < 0n ? -1 : d > 0n ? 1 : a.line - b.line;
        });
        expect(out).toEqual(expected);
        expect(await readdir(dir)).toEqual([]); // the run files are removed
      }),
      { numRuns: 60 },
    );
  });

  it('merges runs whose entries fill several read blocks', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pa-runs-'));
    const runs = new SortedRuns(dir, 5000);
    const n = 12_345;
    // A multiplicative scramble: distinct keys in no order, several blocks of 2048 per run.
    for (let i = 0; i < n; i++) await runs.add(Math.imul(i, 0x9e3779b1) >>> 0, i, 0, 0, i + 2, i);
    let previous = -(2n ** 63n) - 1n;
    let seen = 0;
    for await (const b of runs.blocks()) {
      for (let i = 0; i < b.size; i++) {
        const key = toSigned64(b.keyHi[i] as number, b.keyLo[i] as number);
        expect(key > previous).toBe(true);
        expect(b.price[i]).toBe((b.line[i] as number) - 2);
        previous = key;
        seen++;
      }
    }
    expect(seen).toBe(n);
  });
});

describe('key hashes', () => {
  it('hashes a business key from its parts as the stored hash of its text', () => {
    const part = fc.oneof(fc.constantFrom('', 'ITEM-1', 'S1', 'é😀', '\u0001'), fc.string({ maxLength: 8 }));
    fc.assert(
      fc.property(fc.record({ item_id: part, store_id: part, competitor_name: part, competitor_sku: part, transaction_id: part }), (row) => {
        const stream = new Hash64Stream();
        for (const entity of ['products', 'product_store', 'transactions', 'competitor_prices'] as const) {
          hashKey(stream, entity, row);
          expect(toSigned64(stream.hi, stream.lo)).toBe(storedKeyHash(BUSINESS_KEYS[entity](row)));
        }
      }),
      { numRuns: 500 },
    );
  });
});

/** ASCII cells joined by `separator` after `offset` bytes of padding, as a buffer and each cell's byte range in it. */
function asByteRanges(cells: readonly string[], offset: number, separator: string): { bytes: Buffer; starts: Int32Array; ends: Int32Array } {
  const bytes = Buffer.from(`${'x'.repeat(offset)}${cells.join(separator)}`, 'latin1');
  const starts = new Int32Array(cells.length);
  const ends = new Int32Array(cells.length);
  let at = offset;
  cells.forEach((c, i) => {
    starts[i] = at;
    ends[i] = at + c.length;
    at += c.length + separator.length;
  });
  return { bytes, starts, ends };
}

describe('key hashes from bytes', () => {
  it('takes a key from its cells as bytes as hashKey takes it from the row they convert to, where the parts are the fields as they are', () => {
    const ascii = fc.string({ unit: 'binary-ascii', maxLength: 9 });
    fc.assert(
      fc.property(fc.array(ascii, { minLength: 4, maxLength: 4 }), fc.nat(3), (cells, offset) => {
        const { bytes, starts, ends } = asByteRanges(cells, offset, '');
        const fromBytes = new Hash64Stream();
        const fromRow = new Hash64Stream();
        for (const entity of ENTITIES) {
          const fields = BUSINESS_KEY_FIELDS[entity];
          const row = Object.fromEntries(fields.map((f, i) => [f, cells[i] as string]));
          // The parts are the fields' strings as they are exactly where KEY_PARTS_AS_IS says so.
          expect(BUSINESS_KEY_PARTS[entity](row)).toEqual(KEY_PARTS_AS_IS[entity] ? fields.map((f) => row[f]) : expect.anything());
          if (!KEY_PARTS_AS_IS[entity]) continue;
          hashKeyBytes(fromBytes, bytes, starts, ends, fields.map((_, i) => i));
          hashKey(fromRow, entity, row);
          expect({ hi: fromBytes.hi, lo: fromBytes.lo }).toEqual({ hi: fromRow.hi, lo: fromRow.lo });
        }
      }),
      { numRuns: 1000 },
    );
    // Competitor prices key an observation by its instant: their parts are not the cells as they are.
    expect(KEY_PARTS_AS_IS.competitor_prices).toBe(false);
    const observed = { competitor_name: 'C', item_id: 'I', competitor_sku: 'K', observed_at: '2026-11-24T10:00:00+01:00' };
    expect(BUSINESS_KEY_PARTS.competitor_prices(observed)).not.toEqual(BUSINESS_KEY_FIELDS.competitor_prices.map((f) => observed[f]));
  });

  it('streams ASCII bytes as their text, in any pieces, mixed with text', () => {
    const stream = new Hash64Stream();
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string({ unit: 'binary-ascii', maxLength: 9 }), fc.boolean(), fc.nat(3)), { maxLength: 8 }), (pieces) => {
        stream.begin();
        for (const [piece, asBytes, offset] of pieces) {
          if (asBytes) stream.addBytes(Buffer.from(`${'y'.repeat(offset)}${piece}z`, 'latin1'), offset, offset + piece.length);
          else stream.add(piece);
        }
        stream.finish();
        expect({ hi: stream.hi, lo: stream.lo }).toEqual(hash64(pieces.map(([p]) => p).join('')));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('line hashes', () => {
  it('hashes the chosen cells as hash64 of each one after its length in two code units', () => {
    const cell = fc.array(fc.constantFrom('a', 'b', ',', ';', 'é', '😀', ' ', '"', '\n'), { maxLength: 5 }).map((chars) => chars.join(''));
    fc.assert(
      fc.property(fc.array(cell, { minLength: 1, maxLength: 7 }), fc.array(fc.nat(8), { maxLength: 8 }), (cells, chosen) => {
        const out = { hi: -1, lo: -1 };
        hashCells(cells, chosen, out);
        const text = chosen.map((i) => cells[i] ?? '').map((c) => `${String.fromCharCode(c.length & 0xffff, c.length >>> 16)}${c}`).join('');
        expect(out).toEqual(hash64(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('hashes the cells of an ASCII line given as byte ranges as hashCells hashes them as text', () => {
    const cell = fc.string({ unit: 'binary-ascii', maxLength: 9 }).map((s) => s.replace(/,/g, ''));
    fc.assert(
      fc.property(fc.array(cell, { minLength: 1, maxLength: 7 }), fc.array(fc.nat(6), { maxLength: 8 }), fc.nat(5), (cells, picked, offset) => {
        const chosen = picked.filter((i) => i < cells.length);
        const { bytes, starts, ends } = asByteRanges(cells, offset, ',');
        const fromBytes = { hi: -1, lo: -1 };
        const fromText = { hi: -1, lo: -1 };
        hashByteCells(bytes, starts, ends, chosen, fromBytes);
        hashCells(cells, chosen, fromText);
        expect(fromBytes).toEqual(fromText);
      }),
      { numRuns: 2000 },
    );
  });

  it('is a signed 48-bit integer that changes with a cell read, the header and the file name, not with a cell unread', () => {
    const headers = ['item_id', 'store_id', 'current_price', 'exported_at'];
    const seed = lineSeed(headers, ',', [0, 1, 2], null);
    const line = ['A1', 'S1', '1.50', '2026-11-24T01:00'];
    const hash = lineHashOf(line, seed);
    expect(Number.isSafeInteger(hash) && hash >= -(2 ** 47) && hash < 2 ** 47).toBe(true);
    expect(lineHashOf([...line], seed)).toBe(hash);
    expect(lineHashOf(['A1', 'S1', '1.5', '2026-11-24T01:00'], seed)).not.toBe(hash);
    // A column the mapping does not read (an export timestamp) is not part of the row.
    expect(lineHashOf(['A1', 'S1', '1.50', '2026-11-25T01:00'], seed)).toBe(hash);
    // The same cells under columns in another order, or from a file whose name is data, are other rows.
    expect(lineHashOf(line, lineSeed(['store_id', 'item_id', 'current_price', 'exported_at'], ',', [0, 1, 2], null))).not.toBe(hash);
    expect(lineHashOf(line, lineSeed(headers, ',', [0, 1, 2], 'prices-store-7.csv'))).not.toBe(hash);
    // Cells that would join alike stay apart: a quoted cell holding the delimiter has a line hash of its own.
    expect(lineHashOf(['A,1', 'S1', '1.50', ''], seed)).not.toBe(lineHashOf(['A', '1,S1', '1.50', ''], seed));
    expect(lineHashOf(['A,1', 'S1', '1.50', ''], seed)).not.toBeNaN();
    expect(lineHashOf([], seed)).toBeNaN();
  });
});

describe('hashes', () => {
  it('orders halves as their signed 64-bit value, and round-trips it', () => {
    fc.assert(
      fc.property(fc.nat(0xffffffff), fc.nat(0xffffffff), fc.nat(0xffffffff), fc.nat(0xffffffff), (ah, al, bh, bl) => {
        const a = toSigned64(ah, al);
        const b = toSigned64(bh, bl);
        expect(Math.sign(compareHashes(ah, al, bh, bl))).toBe(a < b ? -1 : a > b ? 1 : 0);
        expect(fromSigned64(a)).toEqual({ hi: ah, lo: al });
      }),
    );
  });

  it('is MurmurHash3 x86_32 over the UTF-16 units (reference values), and tells close keys apart', () => {
    expect(murmur32('', 0)).toBe(0);
    expect(murmur32('', 1)).toBe(0x514e28b7);
    const keys = new Set<string>();
    for (let i = 0; i < 20_000; i += 1) {
      const h = hash64(`ITEM-${i}\u0001STORE-${i % 7}`);
      keys.add(`${h.hi}:${h.lo}`);
    }
    expect(keys.size).toBe(20_000);
  });

  it('streams hash64: any text cut in any pieces hashes as the whole text', () => {
    const stream = new Hash64Stream();
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 12 }), { maxLength: 8 }), (pieces) => {
        stream.begin();
        for (const piece of pieces) stream.add(piece);
        stream.finish();
        expect({ hi: stream.hi, lo: stream.lo }).toEqual(hash64(pieces.join('')));
      }),
      { numRuns: 500 },
    );
  });
});

describe('the canonical form', () => {
  it('writes a decimal one way, whatever the noise', () => {
    expect(['12.50', '12.5', '012.500', '+12.5'].map(canonicalDecimal)).toEqual(['12.5', '12.5', '12.5', '12.5']);
    expect(['-0.0', '0', '.50', '5.', '-1.10'].map(canonicalDecimal)).toEqual(['0', '0', '0.5', '5', '-1.1']);
    expect(canonicalDecimal(12.5)).toBe('12.5');
    expect(canonicalDecimal('1e3')).toBe('1e3'); // not a plain decimal: kept, so it never equals 1000
  });

  it('takes the shortcut for decimals already canonical only where the full rule gives the same text', () => {
    // The rule as one regular expression (canonicalDecimal skips it for text it proves canonical).
    const byRule = (text: string): string => {
      const match = /^([+-]?)0*(\d*)(?:\.(\d*?)0*)?$/.exec(text.trim());
      if (match === null) return text.trim();
      const [, sign, whole = '', fraction = ''] = match;
      if (whole === '' && fraction === '' && !/\d/.test(text)) return text.trim();
      const digits = `${whole === '' ? '0' : whole}${fraction === '' ? '' : `.${fraction}`}`;
      return digits === '0' || sign !== '-' ? digits : `-${digits}`;
    };
    const decimalish = fc.stringMatching(/^[ +-]?[0-9]{0,4}(\.[0-9]{0,4})?[ ]?$/);
    fc.assert(fc.property(fc.oneof(decimalish, fc.string({ maxLength: 6 })), (text) => {
      expect(canonicalDecimal(text)).toBe(byRule(text));
    }), { numRuns: 3000 });
    fc.assert(fc.property(fc.oneof(fc.integer(), fc.double()), (n) => {
      expect(canonicalDecimal(n)).toBe(byRule(String(n)));
    }));
  });

  it('covers the fields the file fills: the agent record and the platform record hash alike', () => {
    const fields = ['current_price', 'item_id', 'stock_on_hand', 'store_id'];
    const sent = { item_id: 'A', store_id: 'S', current_price: '1.50', stock_on_hand: 3 };
    const held = { id: 'x', item_id: 'A', store_id: 'S', current_price: '1.5', stock_on_hand: '3', store_name: 'set in the UI', updated_at: '2026-11-20T10:00:00Z' };
    expect(contentHash('product_store', held, fields)).toEqual(contentHash('product_store', sent, fields));
    expect(contentHash('product_store', held, fields)).toEqual(hash64(canonicalText('product_store', sent, fields))); // streamed, not built
    expect(contentHash('product_store', { ...held, current_price: '1.49' }, fields)).not.toEqual(contentHash('product_store', sent, fields));
    // An empty value is no value (absent, null or empty alike), and not the same as any value; an instant is an instant
    // whatever its offset.
    const withPrice = [...fields, 'regular_price'].sort();
    const noPrice = canonicalText('product_store', sent, withPrice);
    expect(canonicalText('product_store', { ...sent, regular_price: null }, withPrice)).toBe(noPrice);
    expect(canonicalText('product_store', { ...sent, regular_price: '' }, withPrice)).toBe(noPrice);
    expect(canonicalText('product_store', { ...sent, regular_price: '0' }, withPrice)).not.toBe(noPrice);
    // Values do not slide into another field's place.
    expect(canonicalText('product_store', { ...sent, item_id: 'AS', store_id: '' }, fields)).not.toBe(canonicalText('product_store', { ...sent, item_id: 'A', store_id: 'S' }, fields));
    expect(canonicalText('transactions', { transaction_timestamp: '2026-11-20T10:00:00Z' }, ['transaction_timestamp'])).toBe(
      canonicalText('transactions', { transaction_timestamp: '2026-11-20T11:00:00+01:00' }, ['transaction_timestamp']),
    );
  });

  it('measures a price move from the lower to the higher price', () => {
    expect(priceMovePct('1.99', '19.90')).toBeCloseTo(900);
    expect(priceMovePct('19.90', '1.99')).toBeCloseTo(900);
    expect(priceMovePct('2', '2.00')).toBe(0);
    expect(priceMovePct('0', '1')).toBe(Number.POSITIVE_INFINITY);
    expect(priceMovePct('-1', '1')).toBeNull();
  });
});

describe('verdicts', () => {
  it('keeps half a byte per line, any line, any order', () => {
    const v = new Verdicts();
    const lines = [2, 3, 100_001, 9, 4096 * 2 + 1];
    const kinds = [VERDICT.send, VERDICT.unchanged, VERDICT.sentBefore, VERDICT.unchanged] as const;
    lines.forEach((line, i) => v.set(line, kinds[i % 4] ?? VERDICT.none));
    expect(lines.map((l) => v.get(l))).toEqual([VERDICT.send, VERDICT.unchanged, VERDICT.sentBefore, VERDICT.unchanged, VERDICT.send]);
    expect(v.get(4)).toBe(VERDICT.none);
    expect(v.get(10_000_000)).toBe(VERDICT.none);
  });

  it('counts the lines of a range with a verdict, and finds the first and last of them, as line by line', () => {
    const verdict = fc.constantFrom(VERDICT.none, VERDICT.send, VERDICT.unchanged, VERDICT.sentBefore);
    fc.assert(
      fc.property(fc.array(verdict, { maxLength: 9000 }), fc.nat(9500), fc.nat(300), (kinds, from, length) => {
        const v = new Verdicts();
        kinds.forEach((kind, line) => v.set(line, kind));
        const to = from + length;
        const lines = Array.from({ length: length + 1 }, (_, i) => from + i).filter((line) => v.get(line) === VERDICT.unchanged);
        const out = { count: -1, first: -1, last: -1 };
        v.count(from, to, VERDICT.unchanged, out);
        expect(out.count).toBe(lines.length);
        if (lines.length > 0) expect([out.first, out.last]).toEqual([lines[0], lines.at(-1)]);
      }),
      { numRuns: 300 },
    );
  });
});

describe('delta options of a source', () => {
  const settings = (input: Record<string, unknown>) => sourceDelta(SourceSchema.parse({ name: 's', path: '/in', ...input }));
  const problems = (input: Record<string, unknown>) => {
    const result = SourceSchema.safeParse({ name: 's', path: '/in', ...input });
    return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  it('is on by default for full exports (products, product_store in bulk mode), off for files of events', () => {
    expect(settings({ entity: 'products' }).delta).toMatchObject({ enabled: true, fullEveryMs: 7 * 86_400_000, snapshot: false, missing: 'report' });
    expect(settings({ entity: 'product_store' }).delta.enabled).toBe(true);
    expect(settings({ entity: 'product_store', mode: 'import' }).delta.enabled).toBe(false);
    expect(settings({ entity: 'transactions' }).delta.enabled).toBe(false);
    expect(settings({ entity: 'competitor_prices' }).delta.enabled).toBe(false);
    expect(settings({ entity: 'transactions', delta: true }).delta.enabled).toBe(true);
    expect(settings({ entity: 'products', delta: { full_every: '36h' } }).delta.fullEveryMs).toBe(36 * 3_600_000);
    expect(settings({ entity: 'products', delta: { full_every: false } }).delta.fullEveryMs).toBeNull();
  });

  it('has documented brakes, each of which can be off', () => {
    expect(settings({ entity: 'products' }).delta.brakes).toEqual({ max_changed_share: 0.5, max_missing_share: 0.05, max_price_change_pct: 500 });
    expect(settings({ entity: 'products', brakes: { max_price_change_pct: false } }).delta.brakes).toEqual({ max_changed_share: 0.5, max_missing_share: 0.05, max_price_change_pct: false });
    expect(settings({ entity: 'products', brakes: false }).delta.brakes).toEqual({ max_changed_share: false, max_missing_share: false, max_price_change_pct: false });
  });

  it('refuses combinations that cannot work, with a sentence', () => {
    expect(problems({ entity: 'product_store', mode: 'import', delta: true })).toEqual(['delta: delta needs mode: bulk (the ids and results of single rows come from bulk answers)']);
    expect(problems({ entity: 'transactions', snapshot: true })).toEqual(['snapshot: a snapshot needs delta (the agent remembers keys only for delta sources)']);
    expect(problems({ entity: 'products', missing: 'delete' })).toEqual(['missing: missing: delete needs snapshot: true (only a full export says which keys are gone)']);
    expect(problems({ entity: 'products', brakes: { max_changed_share: 2 } })).toHaveLength(1);
    expect(problems({ entity: 'products', delta: { full_every: '7 weeks' } })).toHaveLength(1);
  });
});
