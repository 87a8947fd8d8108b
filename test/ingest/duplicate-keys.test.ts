/** src/ingest/duplicate-keys.ts: the one rule for rows that write the same record, as bulk, import and the dry run apply it. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dryRun } from '../../src/ingest/dry-run.ts';
import { FileKeys, supersededInBatch } from '../../src/ingest/duplicate-keys.ts';
import { compileSource } from '../../src/ingest/read/index.ts';
import { source, tempDir, writeTemp } from './support/read-helpers.ts';

const dir = tempDir();

describe('rows that write the same record', () => {
  it('in a batch: every row but the last of its key is superseded by that last row', () => {
    expect(supersededInBatch(['a', 'b', 'c'])).toEqual(new Map());
    expect(supersededInBatch(['a', 'b', 'a', 'a', 'b'])).toEqual(new Map([[0, 3], [2, 3], [1, 4]]));
  });

  it('in a whole file: the same, by line, in a scratch database of its own', () => {
    const keys = new FileKeys();
    for (let line = 2; line < 25_002; line++) keys.add(`k${line % 20_000}`, line);
    const superseded = keys.superseded();
    expect(superseded.size).toBe(5000);
    expect(superseded.get(2)).toBe(20_002);
    expect(superseded.get(5001)).toBe(25_001);
    keys.close();
    keys.close();
  });

  it('the dry run counts what the push in its mode would supersede: per batch in bulk, over the file in import mode', async () => {
    const store = '52d68118-0237-4ab7-978c-a8c486ecca84';
    const rows = ['item_id,store_id,current_price', `A,${store},1`, `B,${store},1`, `A,${store},2`, `C,${store},1`, `A,${store},3`];
    const file = writeTemp(dir, `${rows.join('\n')}\n`);
    const read = compileSource(source('product_store'));
    const run = (mode: 'bulk' | 'import') =>
      dryRun({ file, read, entity: 'product_store', mode, batchSize: 2, rejectsPath: join(dir, `${mode}.rejects.csv`) });
    // Batches of 2 valid rows: [A B] [A C] [A]: no batch holds a key twice.
    expect(await run('bulk')).toMatchObject({ superseded: 0, wouldSend: 5, rejectsPath: null });
    // One upload: lines 2 and 4 are superseded by line 6.
    expect(await run('import')).toMatchObject({ superseded: 2, wouldSend: 3, rejectsPath: null });
  });
});
