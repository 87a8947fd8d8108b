/**
 * Fix and drop again (issue 16, part 4): the rejects CSV of a pushed file, corrected and dropped back into the same
 * inbox, is read as the file it fixes (the agent's columns left out), tied to that file in the ledger and in its
 * report, and the rows still wrong come back in a rejects CSV of the same layout, ready for the next round. For a
 * CSV source, a workbook source (its rejects CSV dropped back is read as CSV), and a source whose keys come from
 * the file name and the line; then the watcher picking up rejects files whatever the source's pattern.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { SourceSchema } from '../../src/config/source-schema.ts';
import type { FileResult } from '../../src/ingest/file/push-file.ts';
import { PushService } from '../../src/ingest/push-service.ts';
import { isDataFile, nameRules } from '../../src/ingest/watch/file-name-rules.ts';
import { getFile } from '../../src/store/push-ledger.ts';
import { listText, showText } from '../../src/cli/commands/files-text.ts';
import { listFiles, showFile } from '../../src/status/file-list.ts';
import { filesTable } from '../../src/console/file-table.ts';
import { ledgerCounts } from '../../src/store/push-ledger-views.ts';
import { expectReconciled, rejectLines, reportOf } from '../fixtures/push/push-report.ts';
import { workbook } from '../ingest/support/workbooks.ts';
import { untilSeen, writeWhole } from '../support/inbox-seen.ts';
import { drive } from '../support/manual-clock.ts';
import { usePushHarness, type PushHarness } from '../support/push-harness.ts';
import { until } from '../support/test-logger.ts';

const { h, clock } = usePushHarness();
let stores: readonly string[];
beforeAll(() => {
  stores = h.sandbox.control.state().stores;
});

type Source = Awaited<ReturnType<PushHarness['source']>>;
const push = (source: Source, name: string, content: string | Uint8Array) => drive(clock, h.push(source, name, content));
const storeRecord = (item: string) => [...h.sandbox.control.world.productStore.table.rows()].find((r) => r.item_id === item);

/** The rejects CSV as the person edits it: text without the BOM, with `edits` replacing text in it. */
async function corrected(result: FileResult, edits: ReadonlyArray<readonly [string, string]>): Promise<string> {
  expect(result.outcome === 'done' || result.outcome === 'failed').toBe(true);
  const path = 'rejectsPath' in result ? result.rejectsPath : null;
  expect(path).not.toBeNull();
  let text = (await readFile(path ?? '', 'utf8')).replace(/^\uFEFF/, '');
  for (const [from, to] of edits) {
    expect(text, `the rejects CSV holds ${from}`).toContain(from);
    text = text.replace(from, to);
  }
  return `\uFEFF${text}`;
}

describe('fix and drop again', () => {
  it('a corrected rejects CSV sends the fixed rows, is tied to the file it fixes, and the rows still wrong come back; twice', async () => {
    const source = await h.source('product_store', { delimiter: ';', decimal_separator: ',' });
    const [s1, s2] = stores;
    const csv = [
      'item_id;store_id;current_price;price_effective_date',
      `FX-1;${s1};1,99;2026-11-24`,
      `FX-2;${s1};zwei;2026-11-24`,
      `FX-3;${s2};3,50;24.11.2026`,
      `FX-4;${s2};;2026-11-24`,
    ].join('\r\n');
    const first = await push(source, 'prices.csv', `${csv}\r\n`);
    const firstReport = await reportOf(first);
    expect(firstReport.rows).toMatchObject({ read: 4, accepted: 1, rejected: 3 });
    expect(firstReport.fixes).toBeUndefined();

    // The person fixes two rows in a spreadsheet and saves; FX-4 still has no price.
    const fix = await corrected(first, [
      ['zwei', '2,00'],
      ['24.11.2026', '2026-11-25'],
    ]);
    const second = await push(source, 'prices.csv.rejects.csv', fix);
    const report = await reportOf(second);
    const original = await getFile(h.db, first.outcome === 'done' ? first.file.id : -1);
    expect(report.fixes).toEqual({ id: original?.id, file: 'prices.csv', archived_at: original?.final_path, report: `${original?.final_path}.report.json` });
    expect(report.rows).toMatchObject({ read: 3, accepted: 2, rejected: 1, rejected_locally: 1 });
    expectReconciled(report.rows);
    expect(storeRecord('FX-2')?.current_price).toBe('2.00');
    expect(storeRecord('FX-3')).toMatchObject({ current_price: '3.50', price_effective_date: '2026-11-25' });
    // The same layout as the first rejects CSV (not nested in it): the line is the row's line in the dropped file.
    expect(await rejectLines(report.rejectsPath)).toEqual([
      'line;item_id;store_id;current_price;price_effective_date;field;code;message',
      `4;FX-4;${s2};;2026-11-24;current_price;missing;"current_price is required: the ""current_price"" cell is empty"`,
    ]);
    if (second.outcome !== 'done') throw new Error('unreachable');
    expect(second.file.fixes_file_id).toBe(original?.id);
    const detail = await showFile(h.db, second.file.id);
    expect(detail?.fixes).toEqual({ id: original?.id, name: 'prices.csv', finished_at: original?.finished_at, path: original?.final_path });
    // files show and files list say it too.
    const now = new Date(clock.now());
    expect(detail && showText(detail, now)).toMatch(new RegExp(`^Fixes\\s+the rejects of #${original?.id} prices\\.csv \\(${original?.final_path}\\)$`, 'm'));
    expect(listText(await listFiles(h.db, { source: source.name }), now)).toMatch(new RegExp(`prices\\.csv\\.rejects\\.csv \\(fixes #${original?.id}\\)$`, 'm'));

    // The last row fixed: its rejects CSV dropped back is tied to the second file.
    const third = await push(source, basename(second.rejectsPath ?? ''), await corrected(second, [[`;${s2};;`, `;${s2};4,25;`]]));
    const last = await reportOf(third);
    expect(last.fixes?.id).toBe(second.file.id);
    expect(last.rows).toMatchObject({ read: 1, accepted: 1, rejected: 0 });
    expect(last.rejects_file).toBeNull();
    expect(storeRecord('FX-4')?.current_price).toBe('4.25');
  });

  it('a failed file fixed since links to its fix and no longer counts as failed today: dropped again corrected, or its rejects fixed', async () => {
    const source = await h.source('product_store', {});
    const [s1] = stores;
    const day = ['2000-01-01T00:00:00.000Z', '2999-01-01T00:00:00.000Z'] as const;
    const failedToday = async () => (await ledgerCounts(h.db, ...day)).find((c) => c.source === source.name)?.failed_today;
    const listed = async (id: number) => (await listFiles(h.db, { source: source.name })).find((f) => f.id === id);

    // Every row rejected: the file fails. The person corrects it and drops it again under its name.
    const broken = await push(source, 'week.csv', `item_id,store_id,current_price\nFD-1,${s1},eins\nFD-2,${s1},zwei\n`);
    if (broken.outcome !== 'failed') throw new Error(`expected failed, got ${broken.outcome}`);
    expect(await failedToday()).toBe(1);
    expect((await listed(broken.file.id))?.fixed_by).toBeNull();
    const again = await push(source, 'week.csv', `item_id,store_id,current_price\nFD-1,${s1},1.00\nFD-2,${s1},2.00\n`);
    if (again.outcome !== 'done') throw new Error(`expected done, got ${again.outcome}`);
    expect((await listed(broken.file.id))?.fixed_by).toBe(again.file.id);
    expect(await failedToday()).toBe(0);
    const table = filesTable((await listFiles(h.db, { source: source.name })).map((f) => ({ ...f, report_path: null, rejects_path: null, release_command: null })), {}, '');
    expect(String(table)).toContain(`<a class="fixed-by" href="/files/${again.file.id}">fixed by #${again.file.id}</a>`);
    expect(listText(await listFiles(h.db, { source: source.name }), new Date(clock.now()))).toMatch(new RegExp(`week\\.csv \\(fixed by #${again.file.id}\\)$`, 'm'));

    // A file that fails on one of its rows is fixed by its corrected rejects CSV (another name).
    const half = await push(source, 'month.csv', `item_id,store_id,current_price\nFM-1,${s1},drei\n`);
    if (half.outcome !== 'failed') throw new Error(`expected failed, got ${half.outcome}`);
    expect(await failedToday()).toBe(1);
    const fix = await push(source, 'month.csv.rejects.csv', await corrected(half, [['drei', '3.00']]));
    if (fix.outcome !== 'done') throw new Error(`expected done, got ${fix.outcome}`);
    expect((await listed(half.file.id))?.fixed_by).toBe(fix.file.id);
    expect(await failedToday()).toBe(0);
    // A file that failed and was not fixed still counts, and a later failure of the same name fixes nothing.
    const other = await push(source, 'other.csv', `item_id,store_id,current_price\nFO-1,${s1},vier\n`);
    await push(source, 'other.csv', `item_id,store_id,current_price\nFO-1,${s1},fuenf\n`);
    expect((await listed(other.outcome === 'failed' ? other.file.id : -1))?.fixed_by).toBeNull();
    expect(await failedToday()).toBe(2);
  });

  it("a workbook's rejects CSV dropped back into its xlsx source is read as CSV, with the workbook's numbers", async () => {
    const source = await h.source('product_store', { format: 'xlsx', decimal_separator: ',' });
    const file = await workbook(h.dir, 'preise.xlsx', [
      {
        name: 'Preise',
        rows: [
          ['item_id', 'store_id', 'current_price'],
          ['WB-1', stores[0], 1.1],
          ['WB-2', stores[0], 'offen'],
        ],
      },
    ]);
    const first = await push(source, 'preise.xlsx', await readFile(file));
    expect(await rejectLines(first.outcome === 'done' ? first.rejectsPath : null)).toEqual([
      'line;item_id;store_id;current_price;field;code;message',
      `3;WB-2;${stores[0]};offen;current_price;decimal_parsing;"""offen"" is not a decimal"`,
    ]);
    const report = await reportOf(await push(source, 'preise.xlsx.rejects.csv', await corrected(first, [['offen;current_price', '2,2;current_price']])));
    expect(report.fixes?.file).toBe('preise.xlsx');
    expect(report.rows).toMatchObject({ read: 1, accepted: 1, rejected: 0 });
    expect(report.sheet).toBeUndefined();
    expect(storeRecord('WB-2')?.current_price).toBe('2.2');
  });

  it('in import mode too: the fixed rows go in the import job of the fix', async () => {
    const source = await h.source('transactions', { mode: 'import' });
    const csv = 'transaction_id,item_id,transaction_timestamp,quantity\nIM-1,A,2026-11-20T08:00:00Z,1\nIM-2,A,2026-11-20T08:00:00Z,zwei\n';
    const first = await push(source, 'import.csv', csv);
    expect((await reportOf(first)).rows).toMatchObject({ accepted: 1, rejected: 1 });
    const report = await reportOf(await push(source, 'import.csv.rejects.csv', await corrected(first, [[',zwei,', ',2,']])));
    expect(report).toMatchObject({ mode: 'import', fixes: { file: 'import.csv' }, rows: { read: 1, accepted: 1 } });
    expect(h.sandbox.control.state({ keys: true }).transactions.keys).toEqual(expect.arrayContaining(['IM-1', 'IM-2']));
  });

  it('keys built from the file name and the line stay those of the original file', async () => {
    const source = await h.source('transactions', {
      file_name: '^(?<store>\\d{4})-sales\\.csv$',
      columns: { transaction_id: '{file.store}-{line}', item_id: 'item', transaction_timestamp: 'at', quantity: 'qty' },
    });
    const csv = 'item;at;qty\nA;2026-11-20T08:00:00Z;1\nB;2026-11-20T08:05:00Z;eins\n';
    const first = await push(source, '0204-sales.csv', csv);
    expect((await reportOf(first)).rows).toMatchObject({ accepted: 1, rejected: 1 });
    const report = await reportOf(await push(source, '0204-sales.csv.rejects.csv', await corrected(first, [[';eins;', ';1;']])));
    expect(report.rows).toMatchObject({ read: 1, accepted: 1 });
    // Line 3 of 0204-sales.csv, as the row would have been sent the first time.
    expect(h.sandbox.control.state({ keys: true }).transactions.keys).toEqual(expect.arrayContaining(['0204-2', '0204-3']));
    // A row added to the fix has no original line: keyed by its line in the fix (2), it would overwrite 0205-2.
    const next = await push(source, '0205-sales.csv', csv);
    const added = await corrected(next, [[';eins;', ';1;']]);
    const withNew = `${added.trimEnd()}\n;E;2026-11-20T09:00:00Z;9;;;\n`;
    const fixReport = await reportOf(await push(source, '0205-sales.csv.rejects.csv', withNew));
    expect(fixReport.rows).toMatchObject({ read: 2, accepted: 1, rejected: 1 });
    expect(JSON.stringify(fixReport)).toContain('no_line');
    const sent = h.sandbox.control.state({ keys: true }).transactions.keys?.filter((k) => k.startsWith('0205-')).sort();
    expect(sent).toEqual(['0205-2', '0205-3']);
    // A fix of a fix: its line cells are the first fix's lines (C is line 3 there, 4 in the file), so {line} cannot be
    // rebuilt: refused, and it says to correct the first file's rejects CSV instead; nothing is sent under B's key.
    const three = await push(source, '0206-sales.csv', `${csv}C;2026-11-20T08:10:00Z;zwei\n`);
    const fix1 = await push(source, '0206-sales.csv.rejects.csv', await corrected(three, [[';eins;', ';1;']]));
    expect((await reportOf(fix1)).rows).toMatchObject({ read: 2, accepted: 1, rejected: 1 });
    const fix1Rejects = basename('rejectsPath' in fix1 && fix1.rejectsPath !== null ? fix1.rejectsPath : '');
    expect(fix1Rejects).toMatch(/^0206-sales\.csv\.rejects\.\d+\.csv\.rejects\.csv$/);
    const fix2 = await reportOf(await push(source, fix1Rejects, await corrected(fix1, [[';zwei;', ';2;']])), 'failed');
    expect(fix2.rows).toMatchObject({ read: 1, accepted: 0, rejected: 1 });
    expect(JSON.stringify(fix2)).toContain("correct the rows in the first file's rejects CSV");
    const keys0206 = h.sandbox.control.state({ keys: true }).transactions.keys?.filter((k) => k.startsWith('0206-')).sort();
    expect(keys0206).toEqual(['0206-2', '0206-3']);
  });

  it('in a delta snapshot source, a fix is no full export: the keys it lacks are neither missing nor deleted', async () => {
    const source = await h.source('product_store', { delta: true, snapshot: true, missing: 'delete', brakes: false });
    const rows = ['SN-1,1.00', 'SN-2,2.00', 'SN-3,drei'].map((r) => `${r.split(',')[0]},${stores[0]},${r.split(',')[1]}`);
    const first = await push(source, 'full.csv', `item_id,store_id,current_price\n${rows.join('\n')}\n`);
    expect((await reportOf(first)).rows).toMatchObject({ accepted: 2, rejected: 1 });
    const report = await reportOf(await push(source, 'full.csv.rejects.csv', await corrected(first, [[',drei,', ',3.00,']])));
    expect(report.fixes?.file).toBe('full.csv');
    expect(report.rows).toMatchObject({ read: 1, accepted: 1 });
    expect((report as unknown as { delta: { missing: number; deleted: number | null } }).delta).toMatchObject({ missing: 0 });
    expect(['SN-1', 'SN-2', 'SN-3'].map((item) => storeRecord(item)?.current_price)).toEqual(['1.00', '2.00', '3.00']);
  });

  it('a rejects CSV whose name ties it to no file is still read as a fix, without the tie', async () => {
    const source = await h.source('product_store');
    const text = `\uFEFFline,item_id,store_id,current_price,field,code,message\r\n7,NT-1,${stores[0]},5.00,current_price,decimal_parsing,old message\r\n`;
    const report = await reportOf(await push(source, 'renamed-by-someone.csv', text));
    expect(report.fixes).toBeUndefined();
    expect(report.rows).toMatchObject({ read: 1, accepted: 1 });
    expect(storeRecord('NT-1')?.current_price).toBe('5.00');
  });
});

describe('the inbox picks up rejects CSVs dropped back', () => {
  it('for files the pattern takes, whatever the pattern', () => {
    const xlsx = nameRules('*.xls*', '.done');
    const prices = nameRules('prices_*.csv', '.done');
    expect(['book.xlsx.rejects.csv', 'book.xlsx.rejects.12.csv.rejects.csv', 'BOOK.XLSX.REJECTS.CSV', 'book.csv.rejects.csv'].map((n) => isDataFile(n, xlsx))).toEqual([
      true,
      true,
      true,
      false,
    ]);
    expect(['prices_1.csv.rejects.csv', 'prices_1.17.csv.rejects.csv', 'stock_1.csv.rejects.csv', '.rejects.csv', 'x.rejects.csv.tmp'].map((n) => isDataFile(n, prices))).toEqual([
      true,
      true,
      false,
      false,
      false,
    ]);
  });

  it('a watched workbook source pushes a rejects CSV dropped into it', { timeout: 120_000 }, async () => {
    const inbox = join(h.dir, 'watched-fix');
    await mkdir(inbox, { recursive: true });
    const config = SourceSchema.parse({ name: 'excel-fix', entity: 'product_store', path: inbox, format: 'xlsx', stable_ms: 2000 });
    const results: FileResult[] = [];
    const service = new PushService({ deps: h.deps, sources: [config], clock, logger: h.deps.logger, onResult: (_source, result) => results.push(result) });
    await service.start();
    try {
      await writeWhole(join(inbox, 'liste.xlsx.rejects.csv'), `\uFEFFline,item_id,store_id,current_price,field,code,message\r\n2,WF-1,${stores[0]},6.5,current_price,x,y\r\n`);
      await untilSeen(clock, () => service.status().every((s) => s.waitingToBeStable === 1), 'the rejects CSV to be seen');
      await clock.advance(2000);
      // A real push to the sandbox: on a machine loaded by the whole suite it took more than until's 10 s default.
      await until(() => results.length === 1, 'the rejects CSV to be pushed', 60_000);
      expect(results[0]?.outcome).toBe('done');
      expect(storeRecord('WF-1')?.current_price).toBe('6.5');
    } finally {
      await service.stop();
    }
  });
});
