/**
 * An inbox writer against the layout rules of issue 28 (header-rows.ts, the row reader's notes under the table): a
 * file cannot make the reader look for its header past HEADER_SEARCH_LINES, hold more than NOTE_LINES_HELD rows in
 * memory, or turn a long run of rows into skipped ones: rows that are no data by their look are skipped only as the
 * last NOTE_LINES_HELD lines of the file, every other one is a rejected row, listed.
 */
import { describe, expect, it } from 'vitest';
import { HEADER_SEARCH_LINES } from '../../src/ingest/read/header-rows.ts';
import { NOTE_LINES_HELD } from '../../src/ingest/read/reader.ts';
import { readRows } from '../../src/ingest/read/index.ts';
import { abuseSize } from '../support/abuse.ts';
import { drain, failure, source, tempDir, writeTemp } from '../ingest/support/read-helpers.ts';

const dir = tempDir();
const STORE = '7b0d6a8e-8f57-4a3c-9d0a-2f3b6c1e5d4a';
const prices = source('product_store', { delimiter: ';', columns: { item_id: 'Art', current_price: 'Preis' }, defaults: { store_id: STORE } });

describe('a letterhead without end', () => {
  it('the header is not looked for past line 50: the file fails on line 1, naming the mapping', async () => {
    const lines = abuseSize(20_000, 2_000_000);
    const text = `${'Briefkopf;;\n'.repeat(HEADER_SEARCH_LINES)}Art;Preis\n${'A;1\n'.repeat(lines)}`;
    expect(await failure(writeTemp(dir, text), prices)).toMatchObject({ code: 'NO_KNOWN_COLUMNS', line: 1 });
  });
});

describe('rows that look like notes', () => {
  it('in the middle of the table, any number of them are rejected rows, never skipped', async () => {
    const notes = abuseSize(20_000, 1_000_000);
    const text = `Art;Preis;Text\nA1;1;\n${';;Hinweis\n'.repeat(notes)}A2;2;\n`;
    const { rows, rejects, summary } = await drain(writeTemp(dir, text), prices);
    expect(rows).toHaveLength(2);
    expect(rejects).toHaveLength(notes);
    expect(rejects[0]).toMatchObject({ line: 3, field: 'item_id', code: 'missing' });
    expect(summary).toMatchObject({ rows: notes + 2, skipped: 0, complete: true });
  });

  it('at the end of the file, only the last ones are skipped, and the reader holds no more than them', async () => {
    const notes = abuseSize(20_000, 1_000_000);
    const text = `Art;Preis;Text\nA1;1;\n${';;Hinweis\n'.repeat(notes)}`;
    const reader = await readRows(writeTemp(dir, text), prices);
    let rejected = 0;
    let lastReject = 0;
    let bytesAtFirst = -1;
    for await (const outcome of reader) {
      if (outcome.kind !== 'reject') continue;
      if (rejected === 0) bytesAtFirst = reader.progress().bytesRead;
      rejected++;
      // Rows come out while the file is read: each note is out once NOTE_LINES_HELD more are read after it.
      expect(outcome.line).toBe(lastReject === 0 ? 3 : lastReject + 1);
      lastReject = outcome.line;
    }
    // Held rows are bounded: the first note is out long before the file is read (not held to its end).
    expect(bytesAtFirst).toBeGreaterThan(0);
    expect(bytesAtFirst).toBeLessThan(reader.progress().totalBytes / 2);
    expect(rejected).toBe(notes - NOTE_LINES_HELD);
    expect(reader.summary()).toMatchObject({ rows: notes + 1, accepted: 1, rejected: notes - NOTE_LINES_HELD, skipped: NOTE_LINES_HELD, complete: true });
  });
});
