/** src/ingest/duplicate-keys.ts: the one rule for rows that write the same record, as bulk, import and the dry run apply it. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dryRun } from '../../src/ingest/dry-run.ts';
import { BatchKeyHashes, FileKeys, keyHash, linesWithRepeatedHashes, losersInBatch, supersededAfterSend } from '../../src/ingest/duplicate-keys.ts';
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
    expect(rejected.get(25_001)).toEqual({ fate: 'rejected', others: [5001] });
    expect(rejected.get(5001)).toEqual({ fate: 'rejected', others: [25_001] });
    expect(keys.decide('reject').merged.size).toBe(0);
    keys.close();
    keys.close();
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
    expect(await run('bulk', 'reject')).toMatchObject({ superseded: 0, duplicates: 3, rejected: 3, wouldSend: 2, rejectsPath: join(dir, 'bulk.rejects.csv') });
  });
});
