/**
 * parseJson reads a bulk body in pieces (http-io.ts); whatever the body, the result must be JSON.parse's, and a
 * body JSON.parse refuses must get the same 422 as before. Checked on random bodies (fast-check) large enough to
 * be cut, with items whose strings hold the very bytes the cuts look for, and on broken variants of them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonText } from '../../src/json-text.ts';
import { parseJson } from '../../src/sandbox/http-io.ts';

/**
 * The whole body in one parse, as parseJson read it before it read in pieces: JSON.parse, except for keys written
 * with an escape, which V8's JSON.parse can misread after earlier objects, in the same call or before
 * (nodejs/node#63785); parseJsonText reads those right (test/unit/json-text.test.ts).
 */
function reference(buffer: Buffer): unknown {
  try {
    return { ok: true, value: parseJsonText(buffer.toString('utf8')) };
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
}

function actual(buffer: Buffer): unknown {
  const copy = Buffer.from(buffer);
  const parsed = parseJson(buffer);
  expect(buffer.equals(copy)).toBe(true); // the body is left as it was
  if (parsed.ok) return { ok: true, value: parsed.value };
  const body = parsed.reply.body as { detail: { msg: string; type: string }[] };
  expect(body.detail[0]!.type).toBe('json_invalid');
  return { ok: false, message: body.detail[0]!.msg.replace(/^JSON decode error: /, '') };
}

const tricky = fc.constantFrom('},{', '"},{"', '\\"},{\\"', '}]}', '],"items":[', '{"items":[', 'é', '\ud800', '😀', ' ');
const text = fc.oneof(fc.string({ maxLength: 30 }), fc.array(tricky, { maxLength: 4 }).map((parts) => parts.join('x')));
const leaf = fc.oneof(text, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
const value = fc.oneof(leaf, fc.array(leaf, { maxLength: 3 }), fc.dictionary(text, leaf, { maxKeys: 3 }));
const item = fc.oneof({ weight: 5, arbitrary: fc.dictionary(fc.oneof(text, fc.constantFrom('items', '__proto__')), value, { maxKeys: 6 }) }, { weight: 1, arbitrary: value });

/** A body of many items, most of them large enough together to be cut into pieces: items padded by up to 8 kB. */
const body = fc.array(fc.tuple(item, fc.integer({ min: 0, max: 8000 })), { maxLength: 120, size: 'max' }).map((items) =>
  JSON.stringify({ items: items.map(([it, pad]) => (typeof it === 'object' && it !== null && !Array.isArray(it) ? { ...it, pad: 'p'.repeat(pad) } : it)) }),
);

describe('parseJson', () => {
  it('answers as JSON.parse for bulk bodies of any content', () => {
    let cut = 0;
    fc.assert(
      fc.property(body, (json) => {
        const buffer = Buffer.from(json, 'utf8');
        if (buffer.length > 100_000) cut += 1;
        expect(actual(buffer)).toEqual(reference(buffer));
      }),
      { numRuns: 150 },
    );
    expect(cut).toBeGreaterThan(30); // bodies large enough to be read in several pieces
  });

  it('answers as JSON.parse when a body is broken anywhere', () => {
    fc.assert(
      fc.property(body, fc.nat(), fc.constantFrom('', '"', '}', ']', ',', '{', '\\', '\u0000', '\xff'), (json, at, insert) => {
        const bytes = Buffer.from(json, 'utf8');
        const cut = at % (bytes.length + 1);
        const buffer = Buffer.concat([bytes.subarray(0, cut), Buffer.from(insert, 'latin1'), bytes.subarray(cut + (insert === '' ? 1 : 0))]);
        expect(actual(buffer)).toEqual(reference(buffer));
      }),
      { numRuns: 300 },
    );
  });

  it('answers as JSON.parse for other shapes of body', () => {
    for (const json of ['{"items":[]}', '{"items":[1]}', ' {"items":[{}]}', '{"items":[{}]} ', '{"items":[{},{}],"items":[]}', '{"items":{}}', '[]', '{}', '"x"', '{"items":[{},{}]']) {
      const buffer = Buffer.from(json);
      expect(actual(buffer)).toEqual(reference(buffer));
    }
  });
});
