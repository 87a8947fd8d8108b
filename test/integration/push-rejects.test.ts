/**
 * What happens to rows that are not written, in both modes: every kind of bad row lands in the rejects CSV with its
 * line, original fields, field, code and message and never reaches the API; an unclosed quote fails the file; rows
 * the API refuses (a product_store row for an unknown store) come back on their source lines; product_store rows
 * with the same key, inside a batch and across batches: the later row wins. The report names the first rejects, the
 * CSV every one. Every report reconciles.
 */
import { describe, expect, it } from 'vitest';
import { usePushHarness } from '../support/push-harness.ts';
import { REPORT_FIRST_ERRORS } from '../../src/ingest/file/report.ts';
import { expectReconciled, rejectLines, reportOf } from '../fixtures/push/push-report.ts';

const MODES = ['bulk', 'import'] as const;
const UNKNOWN_STORE = '00000000-0000-4000-8000-000000000000';

describe.each(MODES)('push in %s mode: rejects', (mode) => {
  const { h, push } = usePushHarness();

  const m = mode.toUpperCase();
  const storeRecord = (item: string, store: string | undefined) =>
    [...h.sandbox.control.world.productStore.table.rows()].find((r) => r.item_id === item && r.store_id === store);

  it('rejects each kind of bad row locally, with line, original fields, field, code and message; sends the rest', async () => {
    const source = await h.source('transactions', { mode, batch_size: 2 });
    const long = 'x'.repeat(256);
    const csv = [
      'transaction_id,item_id,transaction_timestamp,quantity,price',
      `${m}-R2,A,2026-11-20T08:00:00Z,1,1.00`,
      `,A,2026-11-20T08:00:00Z,1,1.00`,
      `${m}-R4,A,2026-11-20T08:00:00Z,eins,1.00`,
      `${m}-R5,A,31.12.2026,1,1.00`,
      `${m}-R6,${long},2026-11-20T08:00:00Z,1,1.00`,
      `${m}-R7,A,2026-11-20T08:00:00Z`,
      `${m}-R8,A,2026-11-20T08:00:00Z,1,1.00,extra`,
      '',
      `${m}-R10,B,2026-11-20T09:00:00Z,2,3.50`,
    ].join('\n');
    const report = await reportOf(await push(source, 'bad-rows.csv', `${csv}\n`));
    expect(report.rows).toMatchObject({ read: 8, sent: 2, accepted: 2, rejected: 6, rejected_locally: 6, rejected_by_api: 0, blank_lines: 1 });
    expectReconciled(report.rows);
    // Its one log line is a WARN (rows to fix) with the report's own counts, unchanged and skipped included.
    const line = h.logLines().find((l) => l['file'] === 'bad-rows.csv' && l['source'] === source.name);
    expect(line).toMatchObject({ level: 'warn', msg: 'file done with rejected rows', status: 'done', rows: report.rows, rejects_file: report.rejectsPath });
    // Row 8 has one field more than the header: it is kept, in the extra_1 column (nothing of a refused row is lost).
    expect(await rejectLines(report.rejectsPath)).toEqual([
      'line,transaction_id,item_id,transaction_timestamp,quantity,price,extra_1,field,code,message',
      '3,,A,2026-11-20T08:00:00Z,1,1.00,,transaction_id,missing,"transaction_id is required: the ""transaction_id"" cell is empty"',
      `4,${m}-R4,A,2026-11-20T08:00:00Z,eins,1.00,,quantity,decimal_parsing,"""eins"" is not a decimal"`,
      `5,${m}-R5,A,31.12.2026,1,1.00,,transaction_timestamp,datetime_parsing,"""31.12.2026"" does not match date_format iso"`,
      `6,${m}-R6,${long},2026-11-20T08:00:00Z,1,1.00,,item_id,string_too_long,String should have at most 255 characters`,
      `7,${m}-R7,A,2026-11-20T08:00:00Z,,,,,field_count,"the row has 3 fields, the header has 5"`,
      `8,${m}-R8,A,2026-11-20T08:00:00Z,1,1.00,extra,,field_count,"the row has 6 fields, the header has 5"`,
    ]);
    const keys = h.sandbox.control.state({ keys: true }).transactions.keys ?? [];
    expect(keys.filter((k) => k.startsWith(`${m}-R`)).sort()).toEqual([`${m}-R10`, `${m}-R2`]);
  });

  it(`names the first ${REPORT_FIRST_ERRORS} rejects in its report, in file order; the rejects CSV has every one`, async () => {
    const source = await h.source('transactions', { mode, reject_threshold: 1 });
    const bad = Array.from({ length: REPORT_FIRST_ERRORS + 5 }, (_, i) => `${m}-F${i},A,not-a-time`);
    const csv = ['transaction_id,item_id,transaction_timestamp', `${m}-F-OK,A,2026-11-20T08:00:00Z`, ...bad].join('\n');
    const report = await reportOf(await push(source, 'many-rejects.csv', `${csv}\n`));
    expect(report.rows).toMatchObject({ read: bad.length + 1, accepted: 1, rejected: bad.length });
    expect(report.first_errors.map((e) => e.line)).toEqual(Array.from({ length: REPORT_FIRST_ERRORS }, (_, i) => i + 3));
    expect(report.first_errors[0]).toMatchObject({ stage: 'local', field: 'transaction_timestamp', code: 'datetime_parsing' });
    expect(await rejectLines(report.rejectsPath)).toHaveLength(bad.length + 1); // and its header
  });

  it('fails a file with an unclosed quote: nothing of it is sent, the file goes to failed/ with the line', async () => {
    const source = await h.source('transactions', { mode });
    const jobs = h.sandbox.control.state().jobs;
    const csv = `transaction_id,item_id,transaction_timestamp\n${m}-Q1,A,2026-11-20T08:00:00Z\n"${m}-Q2,A,2026-11-20T08:00:00Z\n${m}-Q3,A,2026-11-20T08:00:00Z\n`;
    const result = await push(source, 'quote.csv', csv);
    const report = await reportOf(result, 'failed');
    expect(report.error).toMatchObject({ code: 'UNCLOSED_QUOTE', message: expect.stringContaining('line 3') as unknown });
    expect(result.outcome === 'failed' && result.file.final_path).toMatch(/failed\/quote\.csv$/);
    expect(h.sandbox.control.state().jobs).toEqual(jobs);
    const keys = h.sandbox.control.state({ keys: true }).transactions.keys ?? [];
    expect(keys.filter((k) => k.startsWith(`${m}-Q`))).toEqual([]); // Q1's batch was not full when the file failed
  });

  it('maps rows the API refuses (unknown store) to their source lines, after local rejects and blank lines', async () => {
    const [s1] = h.sandbox.control.state().stores;
    const source = await h.source('product_store', { mode, batch_size: 2 });
    const csv = `item_id,store_id,current_price,store_name\n${m}-U1,${s1},1.00,Nord\n${m}-U2,${s1},kaputt,Nord\n\n${m}-U3,${UNKNOWN_STORE},2.00,"Neu,\nSüd"\n${m}-U4,${s1},4.00,Nord\n`;
    const report = await reportOf(await push(source, 'stores.csv', csv));
    expect(report.rows).toMatchObject({ read: 4, sent: 3, accepted: 2, rejected: 2, rejected_locally: 1, rejected_by_api: 1 });
    expectReconciled(report.rows);
    expect(report.first_errors).toEqual([
      { line: 3, stage: 'local', field: 'current_price', code: 'decimal_parsing', message: '"kaputt" is not a decimal' },
      { line: 5, stage: 'api', field: null, code: 'unknown_store', message: expect.stringContaining(UNKNOWN_STORE) as unknown },
    ]);
    const rejects = await rejectLines(report.rejectsPath);
    expect(rejects[2]).toMatch(/^5,/);
    expect(storeRecord(`${m}-U4`, s1)).toMatchObject({ current_price: '4.00' });
  });

  // Its only row refused, nothing accepted: the file fails (row-fate.ts), with its rejects next to it in failed/. An
  // import job's row errors carry only a line: there the original fields are read back from the source file.
  it(`writes the original fields of a row the ${mode === 'bulk' ? 'API' : 'import job'} refused into the rejects CSV`, async () => {
    const source = await h.source('product_store', { mode });
    const csv = `item_id,store_id,current_price\n${m}-V1,${UNKNOWN_STORE},1.00\n`;
    const report = await reportOf(await push(source, 'refused.csv', csv), 'failed');
    expect(report.error?.code).toBe('NOTHING_ACCEPTED');
    expect((await rejectLines(report.rejectsPath))[1]).toMatch(new RegExp(`^2,${m}-V1,${UNKNOWN_STORE},1\\.00,,unknown_store,`));
  });
});

/** 30 rows over 3 keys: the expected final price per key is the one on the key's last line. */
function duplicateKeyFile(store: string, prefix: string): { csv: string; last: Map<string, string> } {
  const last = new Map<string, string>();
  const rows = ['item_id,store_id,current_price'];
  for (let i = 0; i < 30; i += 1) {
    const item = `${prefix}-${'ABC'[(i * 7) % 3]}`;
    const price = `${i + 1}.00`;
    rows.push(`${item},${store},${price}`);
    last.set(item, price);
  }
  return { csv: `${rows.join('\n')}\n`, last };
}

describe('product_store rows with the same key', () => {
  const { h, push } = usePushHarness({ maxInFlight: 4 });

  const price = (item: string, store: string) =>
    [...h.sandbox.control.world.productStore.table.rows()].find((r) => r.item_id === item && r.store_id === store)?.current_price;

  it('bulk: the later row wins inside a batch (superseded) and across batches in flight at once', async () => {
    const [store = ''] = h.sandbox.control.state().stores;
    const { csv, last } = duplicateKeyFile(store, 'DUPB');
    const source = await h.source('product_store', { batch_size: 4 });
    const report = await reportOf(await push(source, 'dups.csv', csv));
    expect(report.rows.read).toBe(30);
    expect(report.rows.superseded).toBeGreaterThan(0);
    expect(report.rows.rejected).toBe(0);
    expectReconciled(report.rows);
    for (const [item, expected] of last) expect(price(item, store), item).toBe(expected);
  });

  // The API keeps the first row of a key in an import file: the agent leaves the earlier rows out of the upload.
  it('import: the later row wins; the earlier rows are reported superseded', async () => {
    const [store = ''] = h.sandbox.control.state().stores;
    const { csv, last } = duplicateKeyFile(store, 'DUPI');
    const source = await h.source('product_store', { mode: 'import' });
    const report = await reportOf(await push(source, 'dups.csv', csv));
    expect(report.rows).toMatchObject({ read: 30, sent: 3, superseded: 27, rejected: 0 });
    expectReconciled(report.rows);
    for (const [item, expected] of last) expect(price(item, store), item).toBe(expected);
  });
});
