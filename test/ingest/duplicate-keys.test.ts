/** src/ingest/duplicate-keys.ts: the one rule for rows that write the same record, as bulk, import and the dry run apply it. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dryRun } from '../../src/ingest/dry-run.ts';
import { BatchKeyHashes, FileKeys, keyHash, linesWithRepeatedHashes, losersInBatch, supersededAfterSend } from '../../src/ingest/duplicate-keys.ts';
import { compileSource } from '../../src/ingest/read/index.ts';
import { source, tempDir, writeTemp } from './support/read-helpers.ts';

const dir = tempDir();

describe('rows that write the same record', () => {
  it('in a batch: the last (or first) row of a key counts; the others lose to it, or are rejects', () => {
    expect(losersInBatch(['a', 'b', 'c'], 'last')).toEqual(new Map());
    const w = (winner: number, rejected = false) => ({ winner, rejected });
    expect(losersInBatch(['a', 'b', 'a', 'a', 'b'], 'last')).toEqual(new Map([[0, w(3)], [2, w(3)], [1, w(4)]]));
    expect(losersInBatch(['a', 'b', 'a', 'a', 'b'], 'first')).toEqual(new Map([[2, w(0)], [3, w(0)], [4, w(1)]]));
    expect(losersInBatch(['a', 'b', 'a'], 'reject')).toEqual(new Map([[2, w(0, true)]]));
  });

  it('in a whole file: the same, by line, in a scratch database of its own', () => {
    const keys = new FileKeys();
    for (let line = 2; line < 25_002; line++) keys.add(`k${line % 20_000}`, line);
    const last = keys.losers('last');
    expect(last.size).toBe(5000);
    expect(last.get(2)).toEqual({ winner: 20_002, rejected: false });
    expect(keys.losers('first').get(20_002)).toEqual({ winner: 2, rejected: false });
    expect(keys.losers('reject').get(25_001)).toEqual({ winner: 5001, rejected: true });
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
    expect(await run('bulk', 'reject')).toMatchObject({ superseded: 0, duplicates: 2, rejected: 2, wouldSend: 3, rejectsPath: join(dir, 'bulk.rejects.csv') });
  });
});
