/**
 * Excel drops through the whole push (issue 16, part 3): a `format: xlsx` source reads a workbook's sheet as a CSV
 * source reads a file — mapping, validation, row fates, rejects, report — with each row's line being its row number
 * in the sheet the report names. Then the corpus of bad workbooks, each with the outcome a person can act on, and a
 * watched inbox that picks workbooks up as it does CSV files.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { SourceSchema } from '../../src/config/source-schema.ts';
import type { FileResult } from '../../src/ingest/file/push-file.ts';
import { PushService } from '../../src/ingest/push-service.ts';
import { expectReconciled, rejectLines, reportOf } from '../fixtures/push/push-report.ts';
import { asMacroEnabled, bigWorkbook, encrypted, legacyXls, truncated, workbook, type SheetSpec } from '../ingest/support/workbooks.ts';
import { untilSeen, writeWhole } from '../support/inbox-seen.ts';
import { drive } from '../support/manual-clock.ts';
import { usePushHarness, type PushHarness } from '../support/push-harness.ts';
import { until } from '../support/test-logger.ts';

const MODES = ['bulk', 'import'] as const;
const day = (d: number) => new Date(Date.UTC(2026, 10, d));

const { h, clock } = usePushHarness();
let stores: readonly string[];
beforeAll(() => {
  stores = h.sandbox.control.state().stores;
});

const storeRecord = (item: string) => [...h.sandbox.control.world.productStore.table.rows()].find((r) => r.item_id === item);

/** Writes the workbook into `dir` under `name` and pushes it from the source's inbox. */
async function pushWorkbook(source: Awaited<ReturnType<PushHarness['source']>>, name: string, sheets: readonly SheetSpec[]): Promise<FileResult> {
  const file = await workbook(h.dir, name, sheets);
  return drive(clock, h.push(source, name, await readFile(file)));
}

async function pushBytes(source: Awaited<ReturnType<PushHarness['source']>>, name: string, bytes: Uint8Array): Promise<FileResult> {
  return drive(clock, h.push(source, name, bytes));
}

describe.each(MODES)('a workbook pushed in %s mode', (mode) => {
  const m = mode.toUpperCase();

  it('sends its rows as a CSV would be sent, rejects with the sheet and row numbers, a date typed as text through date_format', async () => {
    const source = await h.source('product_store', { mode, format: 'xlsx', date_format: ['DD.MM.YYYY'], batch_size: 2 });
    const [s1, s2] = stores;
    const result = await pushWorkbook(source, `prices-${mode}.xlsx`, [
      {
        name: 'Preise',
        rows: [
          ['item_id', 'store_id', 'current_price', 'price_effective_date', 'Notiz'],
          [`${m}-1`, s1, 1.1, day(24), 'Bio'], // a number cell and a date cell
          [`${m}-2`, s1, { formula: '0.1+0.2', result: 0.30000000000000004 }, day(25)], // a formula: its cached value
          [],
          [`${m}-3`, s2, 2.5, '24.11.2026'], // a date typed as text
          [`${m}-4`, s2, { formula: 'VLOOKUP(A6,Liste!A:B,2,0)', result: { error: '#N/A' } }, day(24)],
          [`${m}-5`, s1, 'zwei', day(24)],
          [`${m}-6`, s1, 3, '11/24/2026'],
          [`${m}-7`, s2, 4, day(26), { formula: 'NA()', result: { error: '#N/A' } }], // an error in a column nothing reads
        ],
        formats: { D2: 'dd.mm.yyyy', D3: 'yyyy-mm-dd', D6: 'dd.mm.yyyy', D7: 'dd.mm.yyyy', D9: 'dd.mm.yyyy' },
      },
      { name: 'Liste', rows: [['item_id', 'Preis']] },
    ]);
    const report = await reportOf(result);
    expect(report.sheet).toBe('Preise');
    expect(report.warnings).toContain(`the workbook has 2 sheets: read "Preise", not "Liste" (sheet: in the source's config chooses another)`);
    // Row 4 is empty: a sheet's file does not hold it (no blank line to count), and the rows after it keep their numbers.
    expect(report.rows).toMatchObject({ read: 7, accepted: 4, rejected: 3, rejected_locally: 3 });
    expectReconciled(report.rows);
    expect(await rejectLines(report.rejectsPath)).toEqual([
      'line,item_id,store_id,current_price,price_effective_date,Notiz,field,code,message',
      `6,${m}-4,${s2},,2026-11-24,,current_price,cell_error,"cell C6 has the formula =VLOOKUP(A6,Liste!A:B,2,0) without a result saved in the file (an error such as #N/A, or it was never calculated)"`,
      `7,${m}-5,${s1},zwei,2026-11-24,,current_price,decimal_parsing,"""zwei"" is not a decimal"`,
      `8,${m}-6,${s1},3,11/24/2026,,price_effective_date,date_parsing,"""11/24/2026"" does not match date_format DD.MM.YYYY or iso"`,
    ]);
    expect(storeRecord(`${m}-1`)).toMatchObject({ current_price: '1.1', price_effective_date: '2026-11-24' });
    expect(storeRecord(`${m}-2`)).toMatchObject({ current_price: '0.3', price_effective_date: '2026-11-25' });
    expect(storeRecord(`${m}-3`)).toMatchObject({ current_price: '2.5', price_effective_date: '2026-11-24' });
    expect(storeRecord(`${m}-7`)).toMatchObject({ current_price: '4', price_effective_date: '2026-11-26' });
    expect(storeRecord(`${m}-4`)).toBeUndefined();
  });
});

describe('a workbook source with delta push', () => {
  it("tomorrow's export sends only the rows that changed", async () => {
    const source = await h.source('product_store', { format: 'xlsx', delta: true });
    const prices = (third: number): SheetSpec[] => [{ name: 'S', rows: [['item_id', 'store_id', 'current_price'], ['DL-1', stores[0], 1.5], ['DL-2', stores[0], 2.5], ['DL-3', stores[0], third]] }];
    expect((await reportOf(await pushWorkbook(source, 'monday.xlsx', prices(3.5)))).rows).toMatchObject({ read: 3, sent: 3, accepted: 3 });
    const tuesday = await reportOf(await pushWorkbook(source, 'tuesday.xlsx', prices(3.75)));
    expect(tuesday.rows).toMatchObject({ read: 3, sent: 1, accepted: 1, unchanged: 2 });
    expectReconciled(tuesday.rows);
    expect(storeRecord('DL-3')?.current_price).toBe('3.75');
  });
});

describe('the corpus of bad workbooks: each has an outcome a person can act on', () => {
  const sheet = (rows: SheetSpec['rows'], extra: Partial<SheetSpec> = {}): SheetSpec[] => [{ name: 'Preise', rows, ...extra }];

  it.each([
    ['encrypted', 'secret.xlsx', 'WORKBOOK_ENCRYPTED', /protected with a password/],
    ['old Excel 97-2003', 'old.xls', 'WORKBOOK_LEGACY_XLS', /Excel 97-2003 workbook \(\.xls\)/],
    ['a CSV named .xlsx', 'export.xlsx', 'NOT_A_WORKBOOK', /looks like CSV/],
    ['not a zip', 'noise.xlsx', 'NOT_A_WORKBOOK', /not a zip archive/],
    ['a truncated zip', 'cut.xlsx', 'WORKBOOK_CORRUPT', /end of its zip archive is missing/],
    ['an empty workbook', 'empty.xlsx', 'EMPTY_FILE', /./],
  ])('%s: the file fails, with its reason, and nothing is sent', async (_what, name, code, message) => {
    const source = await h.source('product_store', { format: 'xlsx' });
    const good = await workbook(h.dir, `good-${name}.xlsx`, sheet([['item_id', 'store_id', 'current_price'], ['C-1', stores[0], 1]]));
    const bytes: Record<string, () => Promise<Uint8Array>> = {
      'secret.xlsx': async () => readFile(await encrypted(join(h.dir, 'secret.bin'))),
      'old.xls': async () => readFile(await legacyXls(join(h.dir, 'old.bin'))),
      'export.xlsx': () => Promise.resolve(Buffer.from(`item_id;store_id;current_price\nC-1;${stores[0]};1,99\n`)),
      'noise.xlsx': () => Promise.resolve(Buffer.from([0x00, 0x01, 0x02, 0xff, 0xfe, 0x10, 0x00, 0x42])),
      'cut.xlsx': async () => readFile(await truncated(good, join(h.dir, 'cut.bin'), 2000)),
      'empty.xlsx': async () => readFile(await workbook(h.dir, 'empty-source.xlsx', sheet([]))),
    };
    const report = await reportOf(await pushBytes(source, name, await (bytes[name] as () => Promise<Uint8Array>)()), 'failed');
    expect(report.error?.code).toBe(code);
    expect(report.error?.message).toMatch(message);
    expect(storeRecord('C-1')).toBeUndefined();
  });

  // The other way round: a workbook in a CSV source (format: xlsx forgotten) is named, not a byte it cannot decode.
  it.each([
    ['a workbook (.xlsx)', 'prices.xlsx', /^the file is a zip archive \(an Excel \.xlsx workbook\?\), not CSV text: for a workbook, set format: xlsx on the source$/],
    ['an old Excel 97-2003 workbook (.xls)', 'prices.xls', /^the file is an old Excel 97-2003 workbook \(\.xls\) or another binary file, not CSV text: save it as CSV/],
  ])('%s pushed to a CSV source: the file fails as NOT_CSV, and nothing is sent', async (_what, name, message) => {
    const source = await h.source('product_store');
    const bytes = name.endsWith('.xls')
      ? await readFile(await legacyXls(join(h.dir, 'in-csv-source.bin')))
      : await readFile(await workbook(h.dir, 'in-csv-source.xlsx', sheet([['item_id', 'store_id', 'current_price'], ['N-1', stores[0], 1]])));
    const report = await reportOf(await pushBytes(source, name, bytes), 'failed');
    expect(report.error?.code).toBe('NOT_CSV');
    expect(report.error?.message).toMatch(message);
    expect(storeRecord('N-1')).toBeUndefined();
  });

  it('the sheet named in the config is not there: the file fails, naming the sheets the workbook has', async () => {
    const source = await h.source('product_store', { format: 'xlsx', sheet: 'Prices' });
    const report = await reportOf(await pushWorkbook(source, 'wrong-sheet.xlsx', sheet([['item_id', 'store_id', 'current_price'], ['W-1', stores[0], 1]])), 'failed');
    expect(report.error).toEqual({ code: 'SHEET_NOT_FOUND', message: `the workbook has no sheet named "Prices"; its sheets: "Preise". Set sheet: in the source's config` });
    expect(storeRecord('W-1')).toBeUndefined();
  });

  it('a sheet chosen by position; a header only: done with no row; a macro-enabled workbook: read as any other, no macro runs', async () => {
    const second = await h.source('product_store', { format: 'xlsx', sheet: 2 });
    const two = await reportOf(
      await pushWorkbook(second, 'two-sheets.xlsx', [
        { name: 'Info', rows: [['nothing to send']] },
        { name: 'Preise', rows: [['item_id', 'store_id', 'current_price'], ['T-1', stores[0], 1.25]] },
      ]),
    );
    expect({ sheet: two.sheet, accepted: two.rows.accepted }).toEqual({ sheet: 'Preise', accepted: 1 });
    expect(storeRecord('T-1')?.current_price).toBe('1.25');

    const source = await h.source('product_store', { format: 'xlsx' });
    const headerOnly = await reportOf(await pushWorkbook(source, 'header-only.xlsx', sheet([['item_id', 'store_id', 'current_price']])));
    expect(headerOnly.rows).toMatchObject({ read: 0, sent: 0, accepted: 0, rejected: 0 });

    const plain = await workbook(h.dir, 'plain.xlsx', sheet([['item_id', 'store_id', 'current_price'], ['M-1', stores[0], 9.99]]));
    const xlsm = await readFile(await asMacroEnabled(plain, join(h.dir, 'macros.xlsm')));
    const macro = await reportOf(await pushBytes(source, 'macros.xlsm', xlsm));
    expect(macro.rows).toMatchObject({ read: 1, accepted: 1 });
    expect(storeRecord('M-1')?.current_price).toBe('9.99');
  });

  it('a date cell is an ISO date; a serial number without a date format is a number, and in a date column a reject', async () => {
    const source = await h.source('product_store', { format: 'xlsx' });
    const result = await pushWorkbook(
      source,
      'serials.xlsx',
      sheet(
        [
          ['item_id', 'store_id', 'current_price', 'price_effective_date'],
          ['SE-1', stores[0], 1, 46350], // formatted as a date below: 2026-11-24
          ['SE-2', stores[0], 1, 46350], // General format: Excel itself shows 46350
        ],
        { formats: { D2: 'dd.mm.yyyy' } },
      ),
    );
    const report = await reportOf(result);
    expect(report.rows).toMatchObject({ read: 2, accepted: 1, rejected: 1 });
    expect(storeRecord('SE-1')?.price_effective_date).toBe('2026-11-24');
    expect(await rejectLines(report.rejectsPath)).toEqual([
      'line,item_id,store_id,current_price,price_effective_date,field,code,message',
      `3,SE-2,${stores[0]},1,46350,price_effective_date,date_parsing,"""46350"" does not match date_format iso"`,
    ]);
  });

  it('merged header cells: a cell a merge covers is a column without a name, not read, and the report says so', async () => {
    const source = await h.source('product_store', { format: 'xlsx' });
    const report = await reportOf(
      await pushWorkbook(source, 'merged.xlsx', sheet([['item_id', 'store_id', 'current_price', 'Aktion'], ['G-1', stores[0], 2, 'x', 'y']], { merges: ['D1:E1'] })),
    );
    expect(report.rows).toMatchObject({ read: 1, accepted: 1 });
    expect(report.warnings).toContain('columns not sent (not product_store fields): "Aktion", "(column 5)"');
    expect(storeRecord('G-1')?.current_price).toBe('2');
  });

  it('a big sheet goes through whole (Excel\'s maximum, 1,048,576 rows, is read by npm run bench:xlsx -- --full)', async () => {
    const source = await h.source('product_store', { format: 'xlsx', batch_size: 1000 });
    const rows = 20_000;
    const file = await bigWorkbook(join(h.dir, 'big.xlsx'), ['item_id', 'store_id', 'current_price', 'price_effective_date'], rows, (i) => [
      `B-${i}`,
      stores[i % stores.length],
      (i % 997) + 0.99,
      day(1 + (i % 28)),
    ]);
    const report = await reportOf(await pushBytes(source, 'big.xlsx', await readFile(file)));
    expect(report.rows).toMatchObject({ read: rows, accepted: rows, rejected: 0 });
    expect(storeRecord(`B-${rows - 1}`)).toMatchObject({ current_price: String(((rows - 1) % 997) + 0.99), price_effective_date: `2026-11-${String(1 + ((rows - 1) % 28)).padStart(2, '0')}` });
  });
});

describe('a watched workbook source', () => {
  it('picks up .xlsx and .xlsm drops as a CSV source picks up .csv, and pushes them through the same path', async () => {
    const inbox = join(h.dir, 'watched-xlsx');
    await mkdir(inbox, { recursive: true });
    const config = SourceSchema.parse({ name: 'excel', entity: 'product_store', path: inbox, format: 'xlsx', stable_ms: 2000 });
    expect(config.pattern).toBe('*.xls*');
    const results: FileResult[] = [];
    const service = new PushService({ deps: h.deps, sources: [config], clock, logger: h.deps.logger, onResult: (_source, result) => results.push(result) });
    await service.start();
    try {
      const file = await workbook(h.dir, 'dropped.xlsx', [{ name: 'S', rows: [['item_id', 'store_id', 'current_price'], ['D-1', stores[0], 5.5]] }]);
      await writeWhole(join(inbox, 'dropped.xlsx'), await readFile(file));
      await untilSeen(clock, () => service.status().every((s) => s.waitingToBeStable === 1), 'the workbook to be seen');
      await clock.advance(2000);
      await until(() => results.length === 1, 'the workbook to be pushed');
      expect(results[0]?.outcome).toBe('done');
      expect(storeRecord('D-1')?.current_price).toBe('5.5');
    } finally {
      await service.stop();
    }
  });
});
