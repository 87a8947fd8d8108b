/**
 * Every row accounted for, and honest outcomes (src/ingest/file/row-fate.ts, duplicate-keys.ts), end to end against the
 * sandbox: rows of one file with the same key are never both accepted, for every entity and policy, and the
 * platform holds exactly what the report calls accepted; a file with nothing accepted, or too many rows rejected,
 * fails; a file whose first rows are all rejected stops sending; a failed file is not a duplicate when dropped again.
 */
import { describe, expect, it } from 'vitest';
import { showText } from '../../src/cli/commands/files-text.ts';
import { resultText } from '../../src/cli/commands/push-summary.ts';
import { filesTable } from '../../src/console/file-table.ts';
import { escapeHtml } from '../../src/console/html.ts';
import { fileCounts } from '../../src/ingest/file/row-fate.ts';
import { ledgerCounts } from '../../src/store/push-ledger-views.ts';
import { listFiles, showFile } from '../../src/status/file-list.ts';
import { usePushHarness } from '../support/push-harness.ts';
import { expectReconciled, rejectLines, reportOf } from '../fixtures/push/push-report.ts';

const UNKNOWN_STORE = '00000000-0000-4000-8000-000000000000';

const { h, push } = usePushHarness({ maxInFlight: 4 });

describe('rows with the same business key', () => {
  /** 30 transaction lines over 3 invoices, as a UK retailer's export keyed by invoice number alone is. */
  function invoiceLines(prefix: string): { csv: string; last: Map<string, string>; first: Map<string, string> } {
    const last = new Map<string, string>();
    const first = new Map<string, string>();
    const rows = ['transaction_id,item_id,transaction_timestamp,quantity'];
    for (let i = 0; i < 30; i++) {
      const id = `${prefix}-${'ABC'[(i * 7) % 3]}`;
      rows.push(`${id},ITEM-${i},2026-11-20T08:00:00Z,${i + 1}`);
      last.set(id, String(i + 1));
      if (!first.has(id)) first.set(id, String(i + 1));
    }
    return { csv: `${rows.join('\n')}\n`, last, first };
  }
  const quantityOf = (id: string) => [...h.sandbox.control.world.transactions.table.rows()].find((r) => r.transaction_id === id)?.quantity;

  it('last (today\'s rule, configured): across batches too, the last line counts; the platform holds exactly the accepted rows', async () => {
    const { csv, last } = invoiceLines('LAST');
    const before = h.sandbox.control.state().transactions.count;
    const source = await h.source('transactions', { batch_size: 4, duplicate_keys: 'last' });
    const report = await reportOf(await push(source, 'lines.csv', csv));
    expect(report.rows).toMatchObject({ read: 30, accepted: 3, superseded: 27, rejected: 0, sent: 3 });
    expectReconciled(report.rows);
    expect(h.sandbox.control.state().transactions.count - before).toBe(report.rows.accepted);
    for (const [id, quantity] of last) expect(quantityOf(id), id).toBe(quantity);
    expect(report.superseded[0]?.message).toMatch(/^superseded by line \d+ with the same transaction_id$/);
  });

  it('first: the first line of a key counts, later ones are superseded and never sent', async () => {
    const { csv, first } = invoiceLines('FIRST');
    const source = await h.source('transactions', { batch_size: 4, duplicate_keys: 'first' });
    const report = await reportOf(await push(source, 'lines.csv', csv));
    expect(report.rows).toMatchObject({ read: 30, sent: 3, accepted: 3, superseded: 27 });
    for (const [id, quantity] of first) expect(quantityOf(id), id).toBe(quantity);
  });

  it('reject: every line of a repeated key is a reject naming the other lines; the lines of unique keys are sent', async () => {
    const { csv } = invoiceLines('REJ');
    const source = await h.source('transactions', { batch_size: 4, duplicate_keys: 'reject' });
    const report = await reportOf(await push(source, 'lines.csv', `${csv}REJ-UNIQUE,ITEM-U,2026-11-20T08:00:00Z,5\n`));
    expect(report.rows).toMatchObject({ read: 31, sent: 1, accepted: 1, rejected: 30, rejected_locally: 30, superseded: 0, merged: 0 });
    expectReconciled(report.rows);
    const lines = await rejectLines(report.rejectsPath);
    // REJ-A is on lines 2, 5, 8, ... 29 (every third line from 2): line 2 names the others, ten of them and the rest counted.
    expect(lines[1]).toMatch(/^2,REJ-A,ITEM-0,.*,duplicate_key,"the same transaction_id as lines 5, 8, 11, 14, 17, 20, 23, 26, 29 \(duplicate_keys: reject\); none of them was sent"$/);
    for (const id of ['REJ-A', 'REJ-B', 'REJ-C']) expect(quantityOf(id), id).toBeUndefined();
    expect(quantityOf('REJ-UNIQUE')).toBe('5');
  });

  it('sum (transactions\' default): the same item twice on a ticket is one transaction with the summed quantity; lines that disagree are both rejected', async () => {
    const csv = [
      'transaction_id,item_id,transaction_timestamp,quantity,price,revenue,store_id',
      'TILL-1,ITEM-A,2026-11-20T08:00:00Z,1,2.50,2.50,S1', // line 2: the first scan
      'TILL-2,ITEM-B,2026-11-20T08:01:00Z,1,1.00,1.00,S1',
      'TILL-1,ITEM-A,2026-11-20T08:00:00Z,2,2.5,5.00,S1', // line 4: the same item again on the ticket (12.5 = 12.50)
      'TILL-3,ITEM-C,2026-11-20T08:02:00Z,1,1.00,1.00,S1', // line 5
      'TILL-3,ITEM-C,2026-11-20T08:02:00Z,1,1.20,1.20,S1', // line 6: the same key at another price
      'TILL-1,ITEM-A,2026-11-20T08:00:00Z,0.5,2.50,1.25,S1', // line 7: a third line of the sale
    ].join('\n');
    // One row per batch: the lines of TILL-1 are in three batches.
    const source = await h.source('transactions', { batch_size: 1 });
    const result = await push(source, 'till.csv', `${csv}\n`);
    const report = await reportOf(result);
    expect(report.rows).toMatchObject({ read: 6, sent: 2, accepted: 2, merged: 2, superseded: 0, rejected: 2, rejected_locally: 2 });
    expectReconciled(report.rows);
    const till1 = [...h.sandbox.control.world.transactions.table.rows()].find((r) => r.transaction_id === 'TILL-1');
    expect(till1).toMatchObject({ item_id: 'ITEM-A', quantity: '3.5', revenue: '8.75', price: '2.50' });
    expect(quantityOf('TILL-3')).toBeUndefined();
    expect(report.merged).toEqual([
      { line: 4, message: 'merged into line 2: the same transaction_id, its quantity added (duplicate_keys: sum)' },
      { line: 7, message: 'merged into line 2: the same transaction_id, its quantity added (duplicate_keys: sum)' },
    ]);
    const rejects = await rejectLines(report.rejectsPath);
    expect(rejects.slice(1)).toEqual([
      expect.stringMatching(/^5,TILL-3,.*,duplicate_key_conflict,the same transaction_id as line 6 but another price: not added up .*none of them was sent$/),
      expect.stringMatching(/^6,TILL-3,.*,duplicate_key_conflict,the same transaction_id as line 5 but another price: not added up .*none of them was sent$/),
    ]);
    // The file's one-line outcome, the summary line, files list and files show name the merged rows.
    if (result.outcome !== 'done') throw new Error('unreachable');
    const counts = await fileCounts(h.db, result.file.id);
    expect(counts).toMatchObject({ merged: 2, superseded: 0 });
    const text = resultText({ result, counts });
    expect(text).toMatch(/^till\.csv: done, some rows rejected, 2 rows merged \(quantity added to another row with the same key\) /);
    expect(text).toContain('rows:    6 read, 2 sent, 2 accepted, 2 rejected (2 locally, 0 by the API), 0 superseded, 2 merged');
    const [listed] = await listFiles(h.db, { limit: 1 });
    expect(listed).toMatchObject({ name: 'till.csv', rows_read: 6, rows_accepted: 2, rows_rejected: 2, rows_merged: 2, rows_superseded: 0 });
    expect(showText((await showFile(h.db, listed!.id))!, new Date())).toContain('2 accepted, 2 rejected locally, 0 refused by the API, 0 superseded, 2 merged, 0 unchanged');
    // status counts them for the day, and the console's file list has a Merged column once a file has merged rows.
    const today = (await ledgerCounts(h.db, '2000-01-01T00:00:00Z', '2999-01-01T00:00:00Z')).find((c) => c.source === source.name);
    expect(today).toMatchObject({ rows_merged_today: 2 });
    const table = filesTable([{ ...listed!, report_path: null, rejects_path: null, release_command: null }], {}, '').toString();
    expect(table).toMatch(/<th[^>]*>Merged<\/th>/);
  });

  it('sum as an import: the same sums in the uploaded CSV', async () => {
    const csv = ['transaction_id,item_id,transaction_timestamp,quantity,price', 'IMP-1,ITEM-A,2026-11-20T08:00:00Z,1,2.50', 'IMP-1,ITEM-A,2026-11-20T08:00:00Z,4,2.50'].join('\n');
    const source = await h.source('transactions', { mode: 'import' });
    const report = await reportOf(await push(source, 'till-import.csv', `${csv}\n`));
    expect(report.rows).toMatchObject({ read: 2, accepted: 1, merged: 1, rejected: 0 });
    expectReconciled(report.rows);
    expect(quantityOf('IMP-1')).toBe('5');
  });

  it('competitor prices: the same observation written with two offsets is one record', async () => {
    const csv = [
      'competitor_name,item_id,observed_at,regular_price,effective_price',
      'Shop,X-1,2026-11-20T10:00:00Z,1.00,1.00',
      'Shop,X-1,2026-11-20T11:00:00+01:00,2.00,2.00',
    ].join('\n');
    const source = await h.source('competitor_prices', { batch_size: 1 });
    const report = await reportOf(await push(source, 'obs.csv', `${csv}\n`));
    expect(report.rows).toMatchObject({ read: 2, accepted: 1, superseded: 1 });
    const rows = [...h.sandbox.control.world.competitorPrices.table.rows()].filter((r) => r.item_id === 'X-1');
    expect(rows.map((r) => r.regular_price)).toEqual(['2.00']);
  });

  it('skipped rows are counted, not rejected', async () => {
    const source = await h.source('transactions', { skip_rows: { when_empty: ['transaction_id', 'item_id'] } });
    const report = await reportOf(await push(source, 'skips.csv', 'transaction_id,item_id,transaction_timestamp\nSK-1,A,2026-11-20T08:00:00Z\n,,2026-11-20T08:00:00Z\n'));
    expect(report.rows).toMatchObject({ read: 2, accepted: 1, skipped: 1, rejected: 0 });
    expectReconciled(report.rows);
    const [listed] = await listFiles(h.db, { limit: 1 });
    expect(listed).toMatchObject({ name: 'skips.csv', rows_read: 2, rows_accepted: 1, rows_skipped: 1, rows_unchanged: 0 });
  });

  it('files show lists every problem of a rejected row, as the rejects CSV does', async () => {
    const source = await h.source('transactions');
    await push(source, 'two-problems.csv', 'transaction_id,item_id,transaction_timestamp,quantity\nTP-1,,yesterday,1\nTP-2,B,2026-11-20T08:00:00Z,2\n');
    const [listed] = await listFiles(h.db, { limit: 1 });
    const detail = await showFile(h.db, listed!.id);
    expect(detail!.first_rejects[0]!.errors.map((e) => e.field)).toEqual(['item_id', 'transaction_timestamp']);
    const text = showText(detail!, new Date());
    expect(text).toContain('1 accepted, 1 rejected locally, 0 refused by the API, 0 superseded, 0 merged, 0 unchanged, 0 skipped');
    expect(text).toMatch(/^\s*2\s+local\s+item_id; transaction_timestamp\s+\S+; \S+\s+.+; .+$/m);
  });
});

describe('honest outcomes', () => {
  const requests = () => h.sandbox.control.state().requests.total;

  it('a file with every row rejected fails, and is not a duplicate when dropped again after the config is fixed', async () => {
    const source = await h.source('product_store', { decimal_separator: ',' });
    const [store = ''] = h.sandbox.control.state().stores;
    const csv = `item_id,store_id,current_price\nD-1,${store},1.50\nD-2,${store},2.50\n`;
    const first = await push(source, 'prices.csv', csv);
    const report = await reportOf(first, 'failed');
    expect(report.error).toMatchObject({ code: 'NOTHING_ACCEPTED' });
    expect(report.rows).toMatchObject({ read: 2, accepted: 0, rejected: 2 });
    expect(first.outcome === 'failed' && first.file.final_path).toMatch(/\/failed\/prices\.csv$/);
    // Every list says why, not only that: the code and its sentence, in the ledger's list and the console's table.
    const [listed] = await listFiles(h.db, { limit: 1 });
    expect(listed).toMatchObject({ name: 'prices.csv', status: 'failed', error_code: 'NOTHING_ACCEPTED', error_message: report.error?.message });
    const table = filesTable([{ ...listed!, report_path: null, rejects_path: null, release_command: null }], {}, '').toString();
    expect(table).toContain(`<span class="why"><code>NOTHING_ACCEPTED</code> ${escapeHtml(report.error?.message ?? '?')}</span>`);
    const markup = filesTable([{ ...listed!, error_message: 'a <b>bold</b> & "quoted" sentence', report_path: null, rejects_path: null, release_command: null }], {}, '').toString();
    expect(markup).toContain('a &lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot; sentence');
    // The same bytes again, read with the right separator: sent, not skipped as "already sent".
    const fixed = { ...source, read: { ...source.read, decimal_separator: '.' as const } };
    const again = await reportOf(await push(fixed, 'prices.csv', csv));
    expect(again.duplicate_of).toBeNull();
    expect(again.rows).toMatchObject({ read: 2, accepted: 2 });
  });

  it('stops a file whose first 1,000 rows are all rejected locally: nothing is sent, the rest is not read', async () => {
    const source = await h.source('product_store', { decimal_separator: ',' });
    const [store = ''] = h.sandbox.control.state().stores;
    const rows = Array.from({ length: 5000 }, (_, i) => `E-${i},${store},${i}.50`);
    const sent = requests();
    const result = await push(source, 'wrong-separator.csv', `item_id,store_id,current_price\n${rows.join('\n')}\n`);
    const report = await reportOf(result, 'failed');
    expect(report.error?.code).toBe('NOTHING_ACCEPTED');
    expect(report.error?.message).toMatch(/^the first 1000 rows judged were all rejected/);
    expect(report.rows).toMatchObject({ read: null, sent: 0, accepted: 0 });
    expect(report.rows.rejected).toBeGreaterThanOrEqual(1000);
    expect(report.rows.rejected).toBeLessThan(5000);
    expect(requests()).toBe(sent);
  });

  it('stops a file whose first 1,000 rows the API all refuses: one batch at a time, then nothing more', async () => {
    const source = await h.source('product_store', { batch_size: 250 });
    const rows = Array.from({ length: 3000 }, (_, i) => `U-${i},${UNKNOWN_STORE},1.00`);
    const sent = requests();
    const report = await reportOf(await push(source, 'unknown-store.csv', `item_id,store_id,current_price\n${rows.join('\n')}\n`), 'failed');
    expect(report.error?.code).toBe('NOTHING_ACCEPTED');
    expect(report.rows).toMatchObject({ sent: 1000, accepted: 0, rejected_by_api: 1000 });
    expect(requests() - sent).toBe(4);
  });

  it('fails a file with more rejected rows than reject_threshold; the accepted rows are on the platform', async () => {
    const source = await h.source('transactions', { reject_threshold: 0.5 });
    const csv = ['transaction_id,item_id,transaction_timestamp', 'TH-1,A,2026-11-20T08:00:00Z', 'TH-2,A,bad', 'TH-3,A,bad', 'TH-4,A,bad'].join('\n');
    const report = await reportOf(await push(source, 'mostly-bad.csv', `${csv}\n`), 'failed');
    expect(report.error).toMatchObject({ code: 'TOO_MANY_REJECTED', message: '3 of 4 rows rejected (75 %), more than reject_threshold 50 %' });
    expect(report.rows).toMatchObject({ read: 4, accepted: 1, rejected: 3 });
    expectReconciled(report.rows);
    expect(h.sandbox.control.state({ keys: true }).transactions.keys).toContain('TH-1');
  });
});
