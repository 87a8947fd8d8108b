/**
 * The fast lane of the CSV reader (src/ingest/read/csv-fast-lane.ts) against csv-parse itself, with the reader's
 * options: random texts over an alphabet of delimiters, line breaks (CRLF, LF, CR), quotes and multi-byte
 * characters, cut into random chunks, give the same records, and the counts csv-parse would give. Texts without a
 * quote never reach csv-parse; a text with one gives the fast lane's records up to its line, then csv-parse's.
 */
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { csvRecordStream, UnreadLines, type StreamRecord } from '../../src/ingest/read/csv-fast-lane.ts';
import { createParser, type Parsed } from '../../src/ingest/read/parser.ts';
import { UNREAD_FIELDS } from '../../src/ingest/read/record-source.ts';

async function viaCsvParse(text: string, delimiter: ',' | ';'): Promise<{ records: Parsed[]; bytes: number }> {
  const parser = createParser(delimiter);
  const records: Parsed[] = [];
  for await (const record of Readable.from(text === '' ? [] : [text]).pipe(parser)) records.push(record as Parsed);
  return { records, bytes: parser.info.bytes };
}

async function viaFastLane(
  chunks: readonly (string | Buffer)[],
  delimiter: ',' | ';',
  unread?: (line: number) => boolean,
): Promise<{ records: Parsed[]; counts: { records: number; bytes: number } }> {
  // Readable.from hands the chunks out one at a time, as the file's decoder does (strings stay strings).
  const stream = csvRecordStream(Readable.from(chunks, { objectMode: true }) as AsyncIterable<string | Buffer>, delimiter);
  if (unread !== undefined) stream.skipUnread(unread);
  const records: Parsed[] = [];
  // A run of lines not read counts as that many records, each UNREAD_FIELDS here.
  const add = (record: StreamRecord) => {
    if (!(record instanceof UnreadLines)) records.push(record);
    else {
      expect(record.count).toBeGreaterThan(0);
      for (let i = 0; i < record.count; i++) records.push(UNREAD_FIELDS);
    }
  };
  for (;;) {
    const taken = stream.take();
    if (taken !== undefined) {
      add(taken);
      continue;
    }
    const next = await stream.next();
    if (next.done === true) break;
    add(next.value);
  }
  return { records, counts: stream.counts() };
}

/** `text` cut at `cuts` (positions), as strings or as UTF-8 buffers cut between characters. */
function cut(text: string, cuts: readonly number[], asBuffers: boolean): (string | Buffer)[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const p of points) {
    // Never between the halves of a surrogate pair (the decoder hands out whole characters).
    if (p > from && !(p < text.length && /[\uDC00-\uDFFF]/.test(text.charAt(p)))) {
      pieces.push(text.slice(from, p));
      from = p;
    }
  }
  pieces.push(text.slice(from));
  return pieces.filter((p) => p !== '').map((p) => (asBuffers ? Buffer.from(p, 'utf8') : p));
}

const alphabet = (quotes: boolean) =>
  fc.constantFrom(...['a', 'b', ' ', ',', ';', '\n', '\r', '\r\n', 'é', '€', '😀', ...(quotes ? ['"', '""'] : [])]);

describe('the CSV fast lane', () => {
  it('gives csv-parse’s records and counts for any text, whatever its chunks', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(alphabet(true), { maxLength: 80 }).map((parts) => parts.join('')),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.constantFrom<',' | ';'>(',', ';'),
        fc.boolean(),
        async (text, cuts, delimiter, asBuffers) => {
          let expected: { records: Parsed[]; bytes: number } | { error: string };
          try {
            expected = await viaCsvParse(text, delimiter);
          } catch (error) {
            expected = { error: (error as { code?: string }).code ?? String(error) };
          }
          let actual: { records: Parsed[]; bytes: number } | { error: string };
          try {
            const fast = await viaFastLane(cut(text, cuts, asBuffers), delimiter);
            expect(fast.counts.records).toBe(fast.records.length);
            actual = { records: fast.records, bytes: fast.counts.bytes };
          } catch (error) {
            actual = { error: (error as { code?: string }).code ?? String(error) };
          }
          expect(actual).toEqual(expected);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('splits a text without quotes itself', async () => {
    const text = 'id;name\r\n1;a\n\n2;b\r3;c';
    const fast = await viaFastLane(cut(text, [3, 9, 10], false), ';');
    expect(fast.records).toEqual([['id', 'name'], ['1', 'a'], [''], ['2', 'b'], ['3', 'c']]);
    expect(fast.counts).toEqual({ records: 5, bytes: Buffer.byteLength(text) });
  });

  it('hands out the lines it is told will not be read unsplit, every other record as csv-parse gives it', async () => {
    // Texts with every kind of line break, and texts with LFs only (split without cutting the skipped lines out;
    // as UTF-8 bytes, without decoding them), in strings or in buffers.
    const lfOnly = fc.constantFrom('a', 'b', ' ', ',', '\n', '\n', 'é', '😀', '"');
    const lfNoQuote = fc.constantFrom('a', 'b', ' ', ',', '\n', '\n', '\n', 'é', '😀');
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.array(alphabet(true), { maxLength: 80 }), fc.array(lfOnly, { maxLength: 80 }), fc.array(lfNoQuote, { maxLength: 80 })).map((parts) => parts.join('')),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.func(fc.boolean()),
        fc.boolean(),
        async (text, cuts, skip, asBuffers) => {
          let expected: Parsed[];
          let bytes: number;
          try {
            ({ records: expected, bytes } = await viaCsvParse(text, ','));
          } catch {
            return; // a broken quote fails either way (the test above)
          }
          const asked = new Set<number>();
          const fast = await viaFastLane(cut(text, cuts, asBuffers), ',', (line) => {
            asked.add(line);
            return skip(line);
          });
          expect(fast.records.length).toBe(expected.length);
          expect(fast.counts).toEqual({ records: expected.length, bytes });
          let line = 1;
          fast.records.forEach((record, i) => {
            if (record === UNREAD_FIELDS) {
              // Only a line of the fast lane (no quote up to it), and only one it was told to skip: then it is one line.
              expect(asked.has(line) && skip(line)).toBe(true);
              const upToIt = text.split(/(\r\n|\n|\r)/).slice(0, 2 * line - 1).join('');
              expect(upToIt).not.toContain('"');
            } else expect(record).toEqual(expected[i]);
            line += 1 + (record.join(',').match(/\r\n|\r|\n/g)?.length ?? 0);
          });
        },
      ),
      { numRuns: 400 },
    );
  });
});
