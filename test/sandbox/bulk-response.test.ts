import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BulkResponseWriter } from '../../src/sandbox/bulk-response.ts';

type Entry = { index: number; ok: true; id: string | number } | { index: number; ok: false; code: string; message: string };

describe('BulkResponseWriter', () => {
  it('writes exactly the bytes JSON.stringify gives, whatever the mix of rows and messages', () => {
    const entry = fc.oneof(
      fc.record({ ok: fc.constant(true as const), id: fc.oneof(fc.uuid(), fc.nat()) }),
      fc.record({ ok: fc.constant(false as const), code: fc.constantFrom('validation_error', 'duplicate_key'), message: fc.string({ unit: 'binary' }) }),
    );
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 40 }), fc.nat({ max: 3 }), (entries, expected) => {
        const writer = new BulkResponseWriter(expected);
        const results: Entry[] = entries.map((e, index) => (e.ok ? { index, ok: true, id: e.id } : { index, ok: false, code: e.code, message: e.message }));
        for (const r of results) {
          if (r.ok) writer.ok(r.index, r.id);
          else writer.fail(r.index, r.code, r.message);
        }
        expect(writer.finish().toString('utf8')).toBe(JSON.stringify({ results }));
      }),
    );
  });
});
