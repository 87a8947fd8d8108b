/**
 * Workbooks as records (src/ingest/read/xlsx-records.ts, xlsx-cells.ts, xlsx-check.ts): cells as the text a CSV
 * would hold (dates ISO, numbers without float artefacts, formulas' cached values, errors named), the sheet by name or
 * position, and each kind of file that is not a readable workbook with its own reason. The corpus of bad workbooks
 * through the whole push, with each one's outcome in the report: push-xlsx.test.ts.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { FileFormatError } from '../../src/ingest/read/errors.ts';
import { cellText, excelDateText, excelNumberText } from '../../src/ingest/read/xlsx-cells.ts';
import { Open } from 'unzipper';
import { columnLetters, openXlsxRecords, type WorkbookRecord, type XlsxRecords, type ZipPart } from '../../src/ingest/read/xlsx-records.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { tempDir } from './support/read-helpers.ts';
import { asMacroEnabled, encrypted, legacyXls, truncated, withSheetXml, workbook } from './support/workbooks.ts';

const dir = tempDir();

async function all(records: XlsxRecords): Promise<WorkbookRecord[]> {
  const out: WorkbookRecord[] = [];
  for (let r = await records.next(); r !== undefined; r = await records.next()) out.push(r);
  records.finish();
  return out;
}

async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FileFormatError);
  const e = error as FileFormatError;
  return { code: e.code, message: e.message };
}

describe('cells as they show', () => {
  it('a whole number padded with zeros by its format keeps them (store numbers, article numbers), as a CSV export writes it', async () => {
    const file = await workbook(dir, 'zeros.xlsx', [
      {
        name: 'Preise',
        rows: [
          ['item_id', 'store_id', 'current_price', 'price_effective_date'],
          [123, 204, 1.99, { formula: 'DATE(2026,3,1)', result: 46082 }],
          [4006381333931, 1204, 2.5, { formula: 'A3', result: 46083 }],
        ],
        formats: { A2: '000000', B2: '0000', B3: '0000', C2: '0000', D2: 'dd.mm.yyyy', D3: '0' },
      },
    ]);
    expect((await all(await openXlsxRecords(file))).slice(1).map((r) => r.fields)).toEqual([
      ['000123', '0204', '1.99', '2026-03-01'], // 1.99 is no whole number: never rounded by its format
      ['4006381333931', '1204', '2.5', '46083'], // a formula's result without a date format stays a number
    ]);
  });

  it('a formula date in a workbook that counts from 1904 (old Mac workbooks) is the same date as a date cell', async () => {
    const date = new Date(Date.UTC(2026, 2, 1));
    const file = await workbook(
      dir,
      'mac-1904.xlsx',
      [{ name: 'Preise', rows: [['item_id', 'price_effective_date'], ['A-1', date], ['A-2', { formula: 'B2+0', result: date }]], formats: { B2: 'yyyy-mm-dd', B3: 'yyyy-mm-dd' } }],
      { date1904: true },
    );
    expect((await all(await openXlsxRecords(file))).slice(1).map((r) => r.fields)).toEqual([
      ['A-1', '2026-03-01'],
      ['A-2', '2026-03-01'],
    ]);
  });

  it('fails a sheet with cells the streaming reader would misread (ISO date cells, inline text in runs) rather than send them wrong', async () => {
    const good = await workbook(dir, 'plain.xlsx', [{ name: 'Preise', rows: [['item_id', 'price_effective_date'], ['A-1', 5]] }]);
    const isoDate = await withSheetXml(good, join(dir, 'iso-date.xlsx'), (xml) => xml.replace(/<c r="B2"([^>]*)><v>5<\/v><\/c>/, '<c r="B2"$1 t="d"><v>2026-03-01T00:00:00</v></c>'));
    expect(await failure(all(await openXlsxRecords(isoDate)))).toEqual({ code: 'WORKBOOK_UNSUPPORTED', message: expect.stringMatching(/ISO text cells \(t="d"/) as unknown });
    const runs = await withSheetXml(good, join(dir, 'inline-runs.xlsx'), (xml) =>
      xml.replace(/<c r="A2"[^>]*>.*?<\/c>/, '<c r="A2" t="inlineStr"><is><r><t>40063</t></r><r><t>81333931</t></r></is></c>'),
    );
    expect((await failure(all(await openXlsxRecords(runs)))).code).toBe('WORKBOOK_UNSUPPORTED');
    const unplaced = await withSheetXml(good, join(dir, 'no-cell-refs.xlsx'), (xml) => xml.replace(/<c r="[A-Z]+\d+"/g, '<c'));
    expect(await failure(all(await openXlsxRecords(unplaced)))).toEqual({ code: 'WORKBOOK_UNSUPPORTED', message: expect.stringMatching(/cells without their reference/) as unknown });
  });

  it('scans a sheet chunk built against the scan in linear time: it ends, in a thread the test can stop', async () => {
    // A megabyte of cell tags never closed, of spaces, of a name that never ends: each pattern of misreadCells looks
    // no further than the next '<' or 512 characters. Unbounded, the first took minutes, the event loop held all the
    // while; the thread is stopped after 20 s, far beyond the milliseconds the scan takes.
    const scan = `import { misreadCells } from ${JSON.stringify(new URL('../../src/ingest/read/xlsx-records.ts', import.meta.url).href)};
      import { parentPort } from 'node:worker_threads';
      const attacks = ['<c '.repeat(350000), '<c' + ' '.repeat(1000000), '<' + 'a'.repeat(1000000) + ':c', '<is>' + ' '.repeat(1000000)];
      parentPort.postMessage(attacks.map((attack) => misreadCells(attack)));`;
    const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(scan)}`));
    const stop = setTimeout(() => void worker.terminate(), 20_000);
    try {
      const answer = await new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
        worker.once('exit', () => resolve('stopped: the scan did not end'));
      });
      expect(answer).toEqual([null, null, null, null]);
    } finally {
      clearTimeout(stop);
      await worker.terminate();
    }
  });
});

describe('a cell as text', () => {
  it('numbers at Excel precision, as plain decimals', () => {
    expect(excelNumberText(1.1)).toBe('1.1');
    expect(excelNumberText(1.1000000000000001)).toBe('1.1');
    expect(excelNumberText(0.1 + 0.2)).toBe('0.3');
    expect(excelNumberText(2.675)).toBe('2.675');
    expect(excelNumberText(-0.000000125)).toBe('-0.000000125');
    expect(excelNumberText(4006381333931)).toBe('4006381333931');
    expect(excelNumberText(1.2e21)).toBe('1200000000000000000000');
    expect(excelNumberText(1e-7)).toBe('0.0000001');
    expect(excelNumberText(100)).toBe('100');
  });

  it('dates ISO, without a zone (Excel keeps wall-clock times)', () => {
    expect(excelDateText(new Date(Date.UTC(2026, 10, 24)))).toBe('2026-11-24');
    expect(excelDateText(new Date(Date.UTC(2026, 10, 24, 18, 30)))).toBe('2026-11-24T18:30:00');
    expect(excelDateText(new Date(Date.UTC(2026, 10, 24, 18, 30, 5, 250)))).toBe('2026-11-24T18:30:05.250');
  });

  it('rich text, hyperlinks, booleans, formulas by their cached result; errors and formulas without a result are problems', () => {
    expect(cellText({ richText: [{ text: 'Bio ' }, { text: 'Honig', font: { bold: true } }] })).toEqual({ text: 'Bio Honig' });
    expect(cellText({ text: 'Shop', hyperlink: 'https://example.com' })).toEqual({ text: 'Shop' });
    expect(cellText(true)).toEqual({ text: 'true' });
    expect(cellText({ formula: 'B2*1.19', result: 1.1900000000000002 })).toEqual({ text: '1.19' });
    expect(cellText({ error: '#DIV/0!' })).toEqual({ text: '#DIV/0!', problem: 'holds the error #DIV/0!' });
    expect(cellText({ formula: 'A1/0', result: { error: '#DIV/0!' } })).toEqual({ text: '#DIV/0!', problem: 'has the formula =A1/0, which gives #DIV/0!' });
    expect(cellText({ formula: 'NA()' }).problem).toMatch(/^has the formula =NA\(\) without a result saved in the file/);
    expect(columnLetters(0)).toBe('A');
    expect(columnLetters(25)).toBe('Z');
    expect(columnLetters(26)).toBe('AA');
    expect(columnLetters(16383)).toBe('XFD');
  });
});

describe('a workbook as records', () => {
  it('reads the first sheet: the header, then each row with its row number; empty rows are skipped, short rows padded', async () => {
    const file = await workbook(dir, 'prices.xlsx', [
      {
        name: 'Preise',
        rows: [
          ['item_id', 'current_price', 'price_effective_date', 'note'],
          ['A-1', 1.1, new Date(Date.UTC(2026, 10, 24)), 'Bio'],
          [],
          ['A-2', { formula: '0.1+0.2', result: 0.30000000000000004 }],
          ['A-3', 2.5, '24.11.2026', { formula: 'NA()', result: { error: '#N/A' } }],
        ],
        formats: { C2: 'dd.mm.yyyy' },
      },
      { name: 'Notizen', rows: [['not read']] },
    ]);
    const records = await openXlsxRecords(file);
    const read = await all(records);
    expect(read.map((r) => [r.line, r.fields])).toEqual([
      [1, ['item_id', 'current_price', 'price_effective_date', 'note']],
      [2, ['A-1', '1.1', '2026-11-24', 'Bio']],
      [4, ['A-2', '0.3', '', '']],
      [5, ['A-3', '2.5', '24.11.2026', '']], // a date typed as text stays text (date_format decides)
    ]);
    expect(read[3]?.problems).toEqual([{ column: 3, message: expect.stringMatching(/^cell D5 has the formula =NA\(\) without a result/) as unknown }]);
    expect(records.sheet).toBe('Preise');
    expect(records.format.warnings).toEqual([`the workbook has 2 sheets: read "Preise", not "Notizen" (sheet: in the source's config chooses another)`]);
    expect(records.bytes().bytesRead).toBe(records.bytes().totalBytes);
  });

  it('writes numbers with the source\'s decimal separator (a decimal-comma source reads cells as it reads its text), rejects CSV with ;', async () => {
    const file = await workbook(dir, 'komma.xlsx', [{ name: 'S', rows: [['item_id', 'current_price'], ['A-1', 1.1], ['A-2', 1234.5]] }]);
    const records = await openXlsxRecords(file, { decimalSeparator: ',' });
    expect((await all(records)).map((r) => r.fields)).toEqual([['item_id', 'current_price'], ['A-1', '1,1'], ['A-2', '1234,5']]);
    expect(records.format).toMatchObject({ delimiter: ';', sheet: 'S' });
  });

  it('reads the sheet named or numbered by sheet:, and names the sheets there are when it is not there', async () => {
    const file = await workbook(dir, 'two.xlsx', [
      { name: 'Notes', rows: [['x']] },
      { name: 'Preise', rows: [['item_id'], ['A-1']] },
    ]);
    for (const sheet of ['Preise', ' preise ', 2]) {
      expect((await all(await openXlsxRecords(file, { sheet }))).map((r) => r.fields)).toEqual([['item_id'], ['A-1']]);
    }
    expect(await failure(openXlsxRecords(file, { sheet: 'Prices' }))).toEqual({
      code: 'SHEET_NOT_FOUND',
      message: `the workbook has no sheet named "Prices"; its sheets: "Notes", "Preise". Set sheet: in the source's config`,
    });
    expect((await failure(openXlsxRecords(file, { sheet: 3 }))).message).toMatch(/^the workbook has no sheet 3 \(it has 2\)/);
  });

  it('a merged header cell leaves the cells it covers without a name (the header rules decide); a macro-enabled workbook reads as any other', async () => {
    const merged = await workbook(dir, 'merged.xlsx', [{ name: 'S', rows: [['item_id', 'Preis', 'x', 'store_id'], ['A-1', 1, 2, 'S1']], merges: ['B1:C1'] }]);
    expect((await all(await openXlsxRecords(merged))).map((r) => r.fields)).toEqual([
      ['item_id', 'Preis', '', 'store_id'],
      ['A-1', '1', '2', 'S1'],
    ]);
    const xlsm = await asMacroEnabled(merged, join(dir, 'macros.xlsm'));
    expect((await all(await openXlsxRecords(xlsm))).map((r) => r.fields)).toHaveLength(2);
  });

  it('an empty sheet and a sheet with only a header give what they hold', async () => {
    expect(await all(await openXlsxRecords(await workbook(dir, 'empty.xlsx', [{ name: 'S', rows: [] }])))).toEqual([]);
    expect((await all(await openXlsxRecords(await workbook(dir, 'header.xlsx', [{ name: 'S', rows: [['item_id', 'sku']] }])))).map((r) => r.line)).toEqual([1]);
  });
});

describe('files that are not a readable workbook', () => {
  it('each has its own reason, before any parsing', async () => {
    const good = await workbook(dir, 'good.xlsx', [{ name: 'S', rows: [['item_id'], ['A-1']] }]);
    const csv = join(dir, 'prices.csv.xlsx');
    await writeFile(csv, 'item_id;current_price\nA-1;1,99\n');
    const empty = join(dir, 'zero.xlsx');
    await writeFile(empty, '');
    const cases: Array<[string, string, RegExp]> = [
      [await encrypted(join(dir, 'secret.xlsx')), 'WORKBOOK_ENCRYPTED', /protected with a password/],
      [await legacyXls(join(dir, 'old.xlsx')), 'WORKBOOK_LEGACY_XLS', /Excel 97-2003 workbook \(\.xls\)/],
      [csv, 'NOT_A_WORKBOOK', /looks like CSV/],
      [await truncated(good, join(dir, 'cut.xlsx'), 2000), 'WORKBOOK_CORRUPT', /end of its zip archive is missing/],
      [empty, 'EMPTY_FILE', /empty/],
    ];
    for (const [file, code, message] of cases) {
      const got = await failure(openXlsxRecords(file));
      expect(got.code, file).toBe(code);
      expect(got.message, file).toMatch(message);
    }
  });

  it('a reader that stops giving rows fails after the stall time (by the injected clock), and stops reading', async () => {
    const good = await workbook(dir, 'stall.xlsx', [{ name: 'S', rows: [['item_id'], ['A-1']] }]);
    const clock = new ManualClock();
    // The sheet's first bytes, then nothing, never an end, as a damaged archive can leave a reader waiting.
    const parts = new Map((await Open.file(good)).files.map((f) => [f.path, f as ZipPart]));
    const sheet = parts.get('xl/worksheets/sheet1.xml');
    const stuck = new PassThrough();
    const head = await new Promise<Buffer>((resolve) => sheet?.stream().once('data', (chunk: Buffer) => resolve(chunk.subarray(0, 40))));
    stuck.write(head);
    parts.set('xl/worksheets/sheet1.xml', { path: 'xl/worksheets/sheet1.xml', uncompressedSize: sheet?.uncompressedSize ?? 0, stream: () => stuck });
    const records = await openXlsxRecords(good, { clock, stallMs: 60_000, parts });
    const pending = records.next().then(
      (record) => ({ record }),
      (error: unknown) => ({ error }),
    );
    await clock.advance(59_999);
    await clock.advance(1);
    const result = await pending;
    expect(result).toEqual({ error: expect.any(FileFormatError) as unknown });
    expect((result as { error: FileFormatError }).error.code).toBe('WORKBOOK_CORRUPT');
    expect((result as { error: FileFormatError }).error.message).toBe('the workbook stopped giving rows for 60 s after row 0: it is probably damaged. Save it again');
    expect(stuck.destroyed).toBe(true);
  });
});
