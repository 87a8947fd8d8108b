/**
 * Delta push's first pass in two halves on two threads (src/ingest/delta/two-halves.ts) pinned to the one-thread pass
 * it replaces: on random files (quotes, line breaks inside quotes, CRLF, blank lines, a BOM, rows that do not
 * convert, rows of the wrong width, no final line break) both give the same sorted entries, line numbers included,
 * whether the halves were used or given up. Real files in a temp folder, a real worker thread.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SourceSchema } from '../../src/config/source-schema.ts';
import { sortedFields } from '../../src/ingest/delta/fast/canonical.ts';
import type { FirstPass } from '../../src/ingest/delta/compare.ts';
import { collectRows, type RowHashing } from '../../src/ingest/delta/fast/row-hash.ts';
import { SortedRuns } from '../../src/ingest/delta/fast/sorted-runs.ts';
import { cutInTwo, firstPass } from '../../src/ingest/delta/two-halves.ts';
import { compileSource, readRows, type ReadInit } from '../../src/ingest/read/index.ts';
import { tempDirForFile } from '../support/temp-dir-for-file.ts';

const HEADER = 'item_id,store_id,current_price,currency';
const temp = tempDirForFile('pa-halves-');

type Entry = readonly [number, number, number, number, number, number];

async function entriesOf(runs: SortedRuns): Promise<Entry[]> {
  const out: Entry[] = [];
  for await (const b of runs.blocks()) {
    for (let i = 0; i < b.size; i++) out.push([b.keyHi[i] as number, b.keyLo[i] as number, b.contentHi[i] as number, b.contentLo[i] as number, b.line[i] as number, b.price[i] as number]);
  }
  return out;
}

/** The first pass over `text` written to a file: on one thread, and as firstPass plans it (halves for any size). */
async function bothWays(text: string | Buffer, source: Record<string, unknown> = {}): Promise<{ whole: Entry[]; pass: Entry[]; halves: boolean; fellBack: string[] }> {
  const file = join(temp.path, `f-${Math.random().toString(36).slice(2)}.csv`);
  await writeFile(file, text);
  const compiled = compileSource(SourceSchema.parse({ name: 's', entity: 'product_store', path: temp.path, ...source }));
  const open = (init: ReadInit = {}) => readRows(file, { ...compiled, entity: 'product_store' }, { name: 'export.csv', ...init });
  const scratch = await mkdtemp(join(temp.path, 'scratch-'));
  try {
    const one = await open({ unvalidated: true });
    const hashing: RowHashing = { entity: 'product_store', fields: sortedFields(one.header.fields) };
    const wholeRuns = new SortedRuns(scratch, 7);
    try {
      await collectRows(hashing, one.chunks(), wholeRuns);
    } finally {
      one.close();
    }
    const whole = await entriesOf(wholeRuns);
    const again = await open({ unvalidated: true });
    const fellBack: string[] = [];
    try {
      const pass: FirstPass = await firstPass({ file, compiled, entity: 'product_store', name: 'export.csv', header: again.header, open, whole: again, minBytes: 1, onFallback: (r) => fellBack.push(r) });
      const halves = typeof pass === 'function';
      let runs: SortedRuns;
      if (typeof pass === 'function') {
        const input = { ...hashing, db: null, scopeId: -1, generation: 1, fileId: null, duplicateKeys: 'last' as const, scratchDir: scratch, snapshot: false };
        runs = (await pass(input)).runs;
      }
      else {
        runs = new SortedRuns(scratch);
        await collectRows(hashing, pass, runs);
      }
      const entries = await entriesOf(runs);
      expect(await readdir(scratch)).toEqual([]); // every run file of both halves removed after the merge
      return { whole, pass: entries, halves, fellBack };
    } finally {
      again.close();
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
    await rm(file, { force: true });
  }
}

const cell = fc.oneof(
  { weight: 6, arbitrary: fc.stringMatching(/^[A-Z0-9]{1,6}$/) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '"q,uoted"', '"two\nlines"', '"cr\r\nlf"', '"say ""hi"""') },
);
const price = fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: 99999 }).map((c) => (c / 100).toFixed(2)) }, { weight: 1, arbitrary: fc.constantFrom('', 'abc', '"1.50"', '-1') });
const row = fc.oneof(
  { weight: 12, arbitrary: fc.tuple(cell, cell, price, fc.constantFrom('EUR', 'USD', 'eur')).map((cells) => cells.join(',')) },
  { weight: 1, arbitrary: fc.constantFrom('', ',,,', 'only,three,cells', 'a,b,1.00,EUR,extra') },
);
const file = fc.record({
  rows: fc.array(row, { minLength: 0, maxLength: 120 }),
  crlf: fc.boolean(),
  bom: fc.boolean(),
  finalBreak: fc.boolean(),
});

describe('the first pass in two halves', () => {
  it('gives the entries of the one-thread pass on any file, whether it cuts the file or gives up', async () => {
    let cut = 0;
    await fc.assert(
      fc.asyncProperty(file, async ({ rows, crlf, bom, finalBreak }) => {
        const br = crlf ? '\r\n' : '\n';
        const text = `${bom ? '\uFEFF' : ''}${[HEADER, ...rows].join(br)}${finalBreak ? br : ''}`;
        const { whole, pass, halves, fellBack } = await bothWays(text);
        expect(pass).toEqual(whole);
        if (halves && fellBack.length === 0) cut++;
      }),
      { numRuns: 14 },
    );
    expect(cut).toBeGreaterThan(0); // the property ran the two threads, not only the fallback
  });

  it('cuts after a line break near the middle; a quote left open across the cut gives the halves up', async () => {
    const lines = Array.from({ length: 40 }, (_, i) => `I${i},S1,${i}.50,EUR`);
    const plain = `${HEADER}\n${lines.join('\n')}\n`;
    const cut = await cutInTwo(await written(plain), 1);
    expect(cut).not.toBeNull();
    expect(plain[(cut?.cut ?? 0) - 1]).toBe('\n');
    expect(cut?.headerEnd).toBe(HEADER.length + 1);

    // One record of many lines across the cut: the first half ends inside its quotes.
    const before = `${HEADER}\n${lines.slice(0, 12).join('\n')}\n`;
    const record = `X,"${'a\n'.repeat(200)}",1.00,EUR\n`;
    const spanning = `${before}${record}${lines.slice(12).join('\n')}\n`;
    const at = (await cutInTwo(await written(spanning), 1))?.cut ?? 0;
    expect(at).toBeGreaterThan(before.length);
    expect(at).toBeLessThan(before.length + record.length);
    const result = await bothWays(spanning);
    expect(result.halves).toBe(true);
    expect(result.fellBack).toHaveLength(1);
    expect(result.pass).toEqual(result.whole);
    expect(result.whole).toHaveLength(41);
  });

  it('reads on one thread what a half cannot read alone: fill_down, {line}, UTF-16, a quoted header, a small file', async () => {
    const text = `${HEADER}\n${Array.from({ length: 30 }, (_, i) => `I${i},${i % 3 === 0 ? 'S1' : ''},1.00,EUR`).join('\n')}\n`;
    const fill = await bothWays(text, { fill_down: ['store_id'] });
    expect(fill.halves).toBe(false);
    expect(fill.pass).toEqual(fill.whole);
    const lineTemplate = await bothWays(text, { columns: { item_id: '{item_id}-{line}' } });
    expect(lineTemplate.halves).toBe(false);
    const utf16 = await bothWays(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));
    expect(utf16.halves).toBe(false);
    expect(utf16.pass).toEqual(utf16.whole);
    expect(await cutInTwo(await written(`"item_id",store_id,current_price,currency\n${text}`), 1)).toBeNull();
    expect(await cutInTwo(await written(text))).toBeNull(); // below MIN_SPLIT_BYTES
  });
});

async function written(text: string): Promise<string> {
  const path = join(temp.path, `w-${Math.random().toString(36).slice(2)}.csv`);
  await writeFile(path, text);
  return path;
}
