/**
 * Delta push's first pass in line mode over bytes (src/ingest/delta/fast/line-scan.ts) pinned to the reader's outcomes it
 * stands for (collectRows over a `keysOnly` reader): on random files (cells with spaces around them, non-ASCII text,
 * surrogate pairs, Excel's apostrophe, null markers, empty keys with and without a default, blank lines, lines of the
 * wrong width, no final line break) both give the same entries (key hash, line, line hash) and the same last line; a
 * file the scan cannot read exactly (a quote, a CR, invalid UTF-8) is left to the reader. Real files in a temp folder.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BUSINESS_KEY_FIELDS } from '../../src/api/schemas/index.ts';
import { SourceSchema } from '../../src/config/source-schema.ts';
import { sortedFields } from '../../src/ingest/delta/fast/canonical.ts';
import { collectRows } from '../../src/ingest/delta/fast/row-hash.ts';
import { lineSeed } from '../../src/ingest/delta/fast/line-hash.ts';
import { scanLines } from '../../src/ingest/delta/fast/line-scan.ts';
import { SortedRuns } from '../../src/ingest/delta/fast/sorted-runs.ts';
import { compileSource, readRows } from '../../src/ingest/read/index.ts';
import { tempDirForFile } from '../support/temp-dir-for-file.ts';

const HEADER = 'item_id,store_id,current_price,currency';
const temp = tempDirForFile('pa-line-scan-');

type Entry = readonly [keyHi: number, keyLo: number, line: number, lineHash: number];

async function entriesOf(runs: SortedRuns): Promise<Entry[]> {
  const out: Entry[] = [];
  for await (const b of runs.blocks()) {
    for (let i = 0; i < b.size; i++) out.push([b.keyHi[i] as number, b.keyLo[i] as number, b.line[i] as number, b.price[i] as number]);
  }
  return out;
}

/** The entries and last line of `text`'s rows: from the reader's outcomes, and from scanLines (null: left to the reader). */
async function bothWays(
  text: string | Buffer,
  source: Record<string, unknown> = {},
  runEntries = 5,
): Promise<{ reader: { entries: Entry[]; lines: number } | Error; scan: { entries: Entry[]; lines: number } | null }> {
  const file = join(temp.path, `f-${Math.random().toString(36).slice(2)}.csv`);
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  await writeFile(file, bytes);
  const compiled = compileSource(SourceSchema.parse({ name: 's', entity: 'product_store', path: temp.path, ...source }));
  const open = () => readRows(file, { ...compiled, entity: 'product_store' }, { name: 'export.csv', keysOnly: BUSINESS_KEY_FIELDS.product_store });
  const scratch = await mkdtemp(join(temp.path, 'scratch-'));
  try {
    const one = await open();
    const seed = lineSeed(one.header.headers, one.header.delimiter, one.header.usedColumns, null);
    const hashing = { entity: 'product_store' as const, fields: sortedFields(one.header.fields), lineSeed: seed };
    const readerRuns = new SortedRuns(scratch, runEntries, 'reader');
    let reader: { entries: Entry[]; lines: number } | Error;
    try {
      await collectRows(hashing, one.chunks(), readerRuns);
      reader = { entries: await entriesOf(readerRuns), lines: one.summary().lines };
    } catch (error) {
      reader = error as Error; // the file fails: the scan must leave it to the reader
    } finally {
      one.close();
    }
    await readerRuns.remove();
    const two = await open();
    const scanRuns = new SortedRuns(scratch, runEntries, 'scan');
    try {
      const lines = await scanLines({ file, body: { start: bytes.indexOf(0x0a) + 1, end: bytes.length }, reader: two, entity: 'product_store', seed }, scanRuns);
      const scan = lines === null ? null : { entries: await entriesOf(scanRuns), lines };
      return { reader, scan };
    } finally {
      two.close();
      await scanRuns.remove();
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
    await rm(file, { force: true });
  }
}

/** A cell: codes, prices, words; with spaces around it, other scripts, an emoji, Excel's apostrophe, a null marker. */
const cell = fc.oneof(
  fc.constantFrom('', ' ', 'NULL', 'null', "'0042", "'Tis", 'ITEM-1', 'ITEM-2', 'S1', 'S2', '1.99', '2,50', 'EUR', 'Müsli', '€', '😀', '  ITEM-1 ', '\tS1', 'a\u00a0'),
  fc.string({ unit: 'grapheme-ascii', maxLength: 6 }).map((s) => s.replace(/[",\r\n]/g, '')),
);
/** A line: of the header's width mostly, sometimes one cell more or fewer, or blank. */
const line = fc.oneof(
  { weight: 8, arbitrary: fc.array(cell, { minLength: 4, maxLength: 4 }).map((cells) => cells.join(',')) },
  { weight: 1, arbitrary: fc.array(cell, { minLength: 3, maxLength: 5 }).map((cells) => cells.join(',')) },
  { weight: 1, arbitrary: fc.constantFrom('', ',,,', ' , , , ') },
);

/** Whether a line of the header's width might be no data to the reader: its item_id cell cleans to nothing. */
function mayBeNote(line: string): boolean {
  const cells = line.split(',');
  const itemId = (cells[0] ?? '').trim().replace(/^'/, '').trim().toLowerCase();
  return cells.length === 4 && ['', 'null'].includes(itemId);
}

describe('scanLines: a half of a file in line mode, read as bytes', () => {
  it('gives the entries and the last line the reader gives, on random files', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(line, { maxLength: 40 }), fc.boolean(), fc.boolean(), async (lines, finalBreak, defaults) => {
        const text = `${HEADER}\n${lines.join('\n')}${finalBreak && lines.length > 0 ? '\n' : ''}`;
        const source = defaults ? { null_values: ['NULL'], defaults: { store_id: 'S0' } } : {};
        const { reader, scan } = await bothWays(text, source);
        // Only a row that may be a note (no required field, so no item_id) is left to the reader; the rest is read here.
        if (scan === null) expect(lines.some(mayBeNote)).toBe(true);
        else expect(scan).toEqual(reader);
      }),
      { numRuns: 60 },
    );
  });

  it('leaves a row with no required field (a note under the table, or a row before more data) to the reader', async () => {
    // The reader holds such a row and skips it when no data row follows (found by the property above: `,,,#`).
    for (const text of [`${HEADER}\n,,,#`, `${HEADER}\nITEM-1,S1,1.99,EUR\n,,,#\n`, `${HEADER}\n,,,#\nITEM-1,S1,1.99,EUR\n`, `${HEADER}\nITEM-1,S1,1.99,EUR\nNULL,,,EUR\n`]) {
      for (const source of [{}, { null_values: ['NULL'], defaults: { store_id: 'S0' } }]) {
        const { reader, scan } = await bothWays(text, source);
        expect(reader).not.toBeInstanceOf(Error);
        expect(scan === null || JSON.stringify(scan) === JSON.stringify(reader), `${JSON.stringify(text)} ${JSON.stringify(source)}`).toBe(true);
      }
    }
    const { reader, scan } = await bothWays(`${HEADER}\nITEM-1,S1,1.99,EUR\n,,,#\n`);
    expect(scan).toBeNull();
    expect(reader instanceof Error ? -1 : reader.entries.length).toBe(1);
  });

  it('reads a file of many pieces, lines across their ends, as the reader does', async () => {
    const long = `ITEM-L,S1,${'9'.repeat(700 * 1024)},EUR`;
    const rows = Array.from({ length: 40_000 }, (_, i) => `ITEM-${i},S${i % 7},${(i % 500) / 100},EUR${i % 3 === 0 ? ' é' : ''}`);
    const { reader, scan } = await bothWays(`${HEADER}\n${rows.slice(0, 20_000).join('\n')}\n${long}\n${rows.slice(20_000).join('\n')}\n`, {}, 4096);
    expect(reader).not.toBeInstanceOf(Error);
    expect(reader instanceof Error ? 0 : reader.entries.length).toBe(40_001);
    expect(scan).toEqual(reader);
  });

  it('leaves a file with a quote, a CR, invalid UTF-8 or a line over a mebibyte to the reader', async () => {
    const rows = `${HEADER}\n${'ITEM-1,S1,1.99,EUR\n'.repeat(10_000)}`;
    const texts = [
      `${rows}ITEM-2,S1,"1.99",EUR\n`,
      `${rows}ITEM-2,S1,1.99,EUR\r\n`,
      Buffer.concat([Buffer.from(`${rows}ITEM-2,S1,1.99,`), Buffer.from([0xff, 0x0a])]),
      `${rows}ITEM-2,S1,${'9'.repeat(1100 * 1024)},EUR\n`,
    ];
    const outcomes: string[] = [];
    for (const text of texts) {
      const { reader, scan } = await bothWays(text, {}, 4096);
      outcomes.push(reader instanceof Error ? reader.message : `${reader.entries.length} rows`);
      expect(scan).toBeNull();
    }
    expect(outcomes).toEqual(['10001 rows', '10001 rows', expect.stringContaining('is not valid UTF-8') as unknown as string, '10001 rows']);
  });
});
