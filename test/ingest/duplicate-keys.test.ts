/** src/ingest/file/duplicate-keys.ts: the one rule for rows that write the same record, as bulk, import and the dry run apply it. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dryRun } from '../../src/ingest/operations/dry-run.ts';
import { BatchKeyHashes, FileKeys, keyHash, linesWithRepeatedHashes, loserRow, losersInBatch, supersededAfterSend } from '../../src/ingest/file/duplicate-keys.ts';
import { addDecimals, sumLines } from '../../src/ingest/file/till-lines.ts';
import { compileSource } from '../../src/ingest/read/index.ts';
import { source, tempDir, writeTemp } from './support/read-helpers.ts';

const dir = tempDir();

describe('rows that write the same record', () => {
  it('in a batch (bulk, last): the last row of a key counts; the others are superseded by it', () => {
    expect(losersInBatch(['a', 'b', 'c'])).toEqual(new Map());
    const w = (winner: number) => ({ fate: 'superseded', winner });
    expect(losersInBatch(['a', 'b', 'a', 'a', 'b'])).toEqual(new Map([[0, w(3)], [2, w(3)], [1, w(4)]]));
  });

  it('in a whole file: last or first wins, reject rejects every row of the key naming the others, by line, in a scratch database of its own', () => {
    const keys = new FileKeys();
    for (let line = 2; line < 25_002; line++) keys.add(`k${line % 20_000}`, line);
    const last = keys.decide('last').losers;
    expect(last.size).toBe(5000);
    expect(last.get(2)).toEqual({ fate: 'superseded', winner: 20_002 });
    expect(keys.decide('first').losers.get(20_002)).toEqual({ fate: 'superseded', winner: 2 });
    const rejected = keys.decide('reject').losers;
    expect(rejected.size).toBe(10_000);
    expect(rejected.get(25_001)).toEqual({ fate: 'rejected', others: [5001], count: 1 });
    expect(rejected.get(5001)).toEqual({ fate: 'rejected', others: [25_001], count: 1 });
    expect(keys.decide('reject').merged.size).toBe(0);
    keys.close();
    keys.close();
  });

  it('sum: lines of a key that agree on all but quantity and revenue are one row with the sums; lines that disagree are all rejected, naming each other', () => {
    const keys = new FileKeys();
    const line = (quantity: string, price = '2.50', extra: object = {}) => ({ transaction_id: 'T', item_id: 'A', transaction_timestamp: '2026-11-20T08:00:00Z', quantity, price, ...extra });
    keys.add('T1', 2, { ...line('1'), transaction_id: 'T1' });
    keys.add('U', 3, { ...line('1'), transaction_id: 'U' });
    keys.add('T1', 4, { ...line('2', '2.5'), transaction_id: 'T1' });
    keys.add('T2', 5, { ...line('1'), transaction_id: 'T2' });
    keys.add('T2', 6, { ...line('1', '2.60'), transaction_id: 'T2' });
    keys.add('T2', 7, { ...line('1'), transaction_id: 'T2' });
    const { losers, merged } = keys.decide('sum');
    keys.close();
    expect(merged).toEqual(new Map([[2, { ...line('3'), transaction_id: 'T1' }]]));
    expect(losers).toEqual(
      new Map<number, unknown>([
        [4, { fate: 'merged', winner: 2 }],
        [5, { fate: 'rejected', others: [6, 7], count: 2, differ: ['price'] }],
        [6, { fate: 'rejected', others: [5, 7], count: 2, differ: ['price'] }],
        [7, { fate: 'rejected', others: [5, 6], count: 2, differ: ['price'] }],
      ]),
    );
    expect(loserRow('transactions', 6, losers.get(6)!, ['raw'])).toEqual({
      line: 6,
      stage: 'local',
      field: null,
      code: 'duplicate_key_conflict',
      message: 'the same transaction_id as lines 5, 7 but another price: not added up (duplicate_keys: sum adds up only lines that agree on everything but quantity and revenue); none of them was sent',
      raw: ['raw'],
    });
    expect(loserRow('transactions', 4, losers.get(4)!, [])).toMatchObject({ stage: 'merged', code: 'merged', message: 'merged into line 2: the same transaction_id, its quantity added (duplicate_keys: sum)' });
  });

  it('sum: the item, the time and the store must agree; a quantity on one line only is no sum', () => {
    const base = { transaction_id: 'T', item_id: 'A', transaction_timestamp: '2026-11-20T08:00:00Z', store_id: 'S1', quantity: '1', revenue: '2.50', price: '2.50' };
    expect(sumLines([base, { ...base, quantity: '2', revenue: '5.00' }])).toEqual({ row: { ...base, quantity: '3', revenue: '7.50' } });
    expect(sumLines([base, { ...base, item_id: 'B' }])).toEqual({ differ: ['item_id'] });
    expect(sumLines([base, { ...base, transaction_timestamp: '2026-11-20T08:00:01Z' }])).toEqual({ differ: ['transaction_timestamp'] });
    expect(sumLines([base, { ...base, store_id: 'S2' }])).toEqual({ differ: ['store_id'] });
    expect(sumLines([base, { ...base, store_id: undefined }])).toEqual({ differ: ['store_id'] });
    expect(sumLines([base, { ...base, quantity: null }])).toEqual({ differ: ['quantity'] });
    const { quantity: _q, revenue: _r, ...bare } = base;
    expect(sumLines([bare, bare])).toEqual({ row: bare }); // no quantity on either line: nothing to add, one row
  });

  it('adds decimal strings exactly, never through a float', () => {
    expect(addDecimals('0.1', '0.2')).toBe('0.3');
    expect(addDecimals('1.50', '2')).toBe('3.50');
    expect(addDecimals('-1', '0.25')).toBe('-0.75');
    expect(addDecimals('-0.5', '0.5')).toBe('0.0');
    expect(addDecimals('.5', '+1.')).toBe('1.5');
    expect(addDecimals('9007199254740993', '1')).toBe('9007199254740994');
  });

  it('across batches (bulk, last): repeated key hashes point at the rows to confirm, in passes of bounded size', async () => {
    const batches: Uint8Array[] = [];
    for (let b = 0; b < 30; b++) {
      const hashes = new BatchKeyHashes();
      for (let i = 0; i < 100; i++) {
        const line = 2 + b * 100 + i;
        hashes.add(line % 1000 === 7 ? 'repeated' : `key-${line}`, line);
      }
      batches.push(hashes.bytes() as Uint8Array);
    }
    await expect(linesWithRepeatedHashes(() => batches, 3000)).resolves.toEqual(new Set([7, 1007, 2007]));
    await expect(linesWithRepeatedHashes(() => batches, 3000, 500)).resolves.toEqual(new Set([7, 1007, 2007])); // six passes
    expect(keyHash('repeated')).toEqual(keyHash('repeated'));
    expect(keyHash('a\u0001bc')).not.toEqual(keyHash('ab\u0001c'));
    expect(supersededAfterSend(new Map([[1007, 'k'], [2007, 'k'], [3007, 'k'], [5, 'other']]))).toEqual(new Map([[1007, 3007], [2007, 3007]]));
  });

  it('the dry run counts what the push would do, over the whole file, in either mode', async () => {
    const store = '52d68118-0237-4ab7-978c-a8c486ecca84';
    const rows = ['item_id,store_id,current_price', `A,${store},1`, `B,${store},1`, `A,${store},2`, `C,${store},1`, `A,${store},3`];
    const file = writeTemp(dir, `${rows.join('\n')}\n`);
    const run = (mode: 'bulk' | 'import', duplicate_keys: 'last' | 'reject') =>
      dryRun({ file, read: compileSource(source('product_store', { duplicate_keys })), entity: 'product_store', mode, batchSize: 2, rejectsPath: join(dir, `${mode}.rejects.csv`) });
    // Lines 2 and 4 are superseded by line 6, whatever the batches.
    expect(await run('bulk', 'last')).toMatchObject({ superseded: 2, duplicates: 0, wouldSend: 3, rejectsPath: null });
    expect(await run('import', 'last')).toMatchObject({ superseded: 2, wouldSend: 3, rejectsPath: null });
    // reject: the three rows of A are rejects, each naming the other two.
    const till = writeTemp(dir, 'transaction_id,item_id,transaction_timestamp,quantity\nT,A,2026-11-20T08:00:00Z,1\nT,A,2026-11-20T08:00:00Z,2\nU,B,2026-11-20T08:00:00Z,1\n');
    const sum = await dryRun({ file: till, read: compileSource(source('transactions')), entity: 'transactions', mode: 'bulk', batchSize: 2, rejectsPath: join(dir, 'sum.rejects.csv') });
    expect(sum).toMatchObject({ merged: 1, superseded: 0, duplicates: 0, wouldSend: 2, rejectsPath: null });
    expect(await run('bulk', 'reject')).toMatchObject({ superseded: 0, duplicates: 3, rejected: 3, wouldSend: 2, rejectsPath: join(dir, 'bulk.rejects.csv') });
  });
});
