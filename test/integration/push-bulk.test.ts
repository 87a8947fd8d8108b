/**
 * Push against the sandbox over real HTTP: each entity in bulk mode, rejects, superseded product_store rows,
 * duplicates, file-level failures; reports and sandbox state checked.
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Entity } from '../../src/api/schemas/index.ts';
import type { FileResult, PushSource } from '../../src/ingest/file/push-file.ts';
import { pushHarness } from '../support/push-harness.ts';
import { openForFile } from '../support/open-for-file.ts';

const h = openForFile(() => pushHarness());

async function report(path: string): Promise<Record<string, unknown> & { rows: Record<string, number> }> {
  return JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown> & { rows: Record<string, number> };
}

/** A file that ended done, failed or duplicate: with its report and rejects. */
type Finished = Extract<FileResult, { rejectsPath: string | null }>;

/** Pushes `csv` as `name` from a new source of `entity` (with `extra` settings); asserts that the file ended as `outcome`. */
async function pushed(entity: Entity, name: string, csv: string, outcome: 'done' | 'failed', extra: Record<string, unknown> = {}): Promise<{ source: PushSource; result: Finished }> {
  const source = await h.source(entity, extra);
  const result = await h.push(source, name, csv);
  expect(result.outcome).toBe(outcome);
  if (result.outcome !== outcome) throw new Error('unreachable');
  return { source, result };
}

describe('push in bulk mode', () => {
  it('sends products with a custom column, rejects an invalid row with its line, and archives the file', async () => {
    const csv = 'item_id,sku,product_name,Farbe\nP1,P1,Apfel,rot\nP2,,Birne,gelb\nP3,P3,Kiwi,grün\nP4,P4,Pflaume,blau\n';
    const { source, result } = await pushed('products', 'products.csv', csv, 'done', { batch_size: 2 });
    const r = await report(result.reportPath);
    expect(r.rows).toMatchObject({ read: 4, sent: 3, accepted: 3, rejected: 1, rejected_locally: 1, superseded: 0 });
    expect(r.first_errors).toEqual([{ line: 3, stage: 'local', field: 'sku', code: 'missing', message: 'sku is required: the "sku" cell is empty' }]);
    expect(result.file.final_path).toMatch(/archive\/\d{4}-\d{2}-\d{2}\/products\.csv$/);
    expect(await readdir(join(source.inbox, 'processing'))).toEqual([]);
    const rejects = await readFile(result.rejectsPath ?? '', 'utf8');
    expect(rejects).toBe('\uFEFFline,item_id,sku,product_name,Farbe,field,code,message\r\n3,P2,,Birne,gelb,sku,missing,"sku is required: the ""sku"" cell is empty"\r\n');
    const state = h.sandbox.control.state({ keys: true });
    expect(state.products.keys).toEqual(expect.arrayContaining(['P1', 'P3', 'P4']));
    expect(state.products.keys).not.toContain('P2');
  });

  it('keeps every field of a row longer than the header in the rejects CSV, in extra columns', async () => {
    const csv = 'transaction_id,item_id,transaction_timestamp\nX1,A,2026-11-20T08:00:00Z\nX2,A,2026-11-20T08:00:00Z,surplus,more\n';
    const { result } = await pushed('transactions', 'long-row.csv', csv, 'done');
    const lines = (await readFile(result.rejectsPath ?? '', 'utf8')).split('\r\n');
    expect(lines[0]).toBe('\uFEFFline,transaction_id,item_id,transaction_timestamp,extra_1,extra_2,field,code,message');
    expect(lines[1]).toMatch(/^3,X2,A,2026-11-20T08:00:00Z,surplus,more,/);
  });

  it('never sends two rows with the same (item_id, store_id) in one batch: the later wins, the earlier is superseded', async () => {
    const [s1, s2] = h.sandbox.control.state().stores;
    const csv = `item_id,store_id,current_price\nA,${s1},1.00\nA,${s2},2.00\nA,${s1},1.50\n`;
    const { result } = await pushed('product_store', 'stores.csv', csv, 'done');
    const r = await report(result.reportPath);
    expect(r.rows).toMatchObject({ read: 3, sent: 2, accepted: 2, rejected: 0, superseded: 1 });
    expect(r.superseded).toEqual([{ line: 2, message: 'superseded by line 4 with the same item_id and store_id' }]);
    expect(result.rejectsPath).toBeNull();
    const records = [];
    for await (const page of h.client.productStore.list({ item_id: 'A' })) records.push(...page.items);
    expect(records.find((x) => x.store_id === s1)?.current_price).toBe('1.50');
  });

  it('sends competitor prices only through bulk, never the single create', async () => {
    const csv = 'competitor_name,observed_at,regular_price,effective_price,item_id\nAldi,2026-11-20T08:00:00Z,1.99,1.79,A\nLidl,2026-11-20T08:00:00Z,2.09,2.09,A\n';
    await pushed('competitor_prices', 'cp.csv', csv, 'done');
    const state = h.sandbox.control.state();
    expect(state.competitor_prices.count).toBe(2);
    expect(state.competitor_prices.single_creates).toBe(0);
  });

  it('archives a re-dropped identical file as a duplicate without sending it, and sends it with force', async () => {
    const source = await h.source('transactions');
    const csv = 'transaction_id,item_id,transaction_timestamp,quantity,price\nT1,A,2026-11-20T08:00:00Z,1,1.99\n';
    const first = await h.push(source, 'tx.csv', csv);
    expect(first.outcome).toBe('done');
    const before = h.sandbox.control.state().requests.total;
    const again = await h.push(source, 'tx.csv', csv);
    expect(again.outcome).toBe('duplicate');
    expect(h.sandbox.control.state().requests.total).toBe(before);
    if (again.outcome !== 'duplicate') return;
    expect((await report(again.reportPath)).duplicate_of).toMatchObject({ file: 'tx.csv' });
    expect(again.file.final_path).toMatch(/archive\/.*\/tx\.\d+\.csv$/);
    const forced = await h.push(source, 'tx.csv', csv, { force: true });
    expect(forced.outcome).toBe('done');
    expect(h.sandbox.control.state({ keys: true }).transactions.keys?.filter((k) => k === 'T1')).toEqual(['T1']);
  });

  it('fails a file with an unclosed quote and moves it to failed/ with the error and its line', async () => {
    const csv = 'transaction_id,item_id,transaction_timestamp\nT9,A,2026-11-20T08:00:00Z\n"T10,A,2026-11-20T08:00:00Z\nT11,A,2026-11-20T08:00:00Z\n';
    const { result } = await pushed('transactions', 'broken.csv', csv, 'failed');
    expect(result.file.final_path).toMatch(/failed\/broken\.csv$/);
    const r = await report(result.reportPath);
    expect(r.error).toMatchObject({ code: 'UNCLOSED_QUOTE' });
    expect(String((r.error as { message: string }).message)).toMatch(/line 3/);
    expect(h.sandbox.control.state({ keys: true }).transactions.keys).not.toContain('T10');
  });
});
