import { readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sqlRow } from '../support/state-sql.ts';
import { beginExportRange, completeExportRange } from '../../src/store/outbox-exports.ts';
import { exportFileName, exportStoreFiles, storeFolderName } from '../../src/outbox/store-files.ts';
import { STORE_A, STORE_B, approval, deliver, openTempDb, reopenTempDb, tempDir } from './support.ts';

/** Every file under `dir`, relative, sorted (temporary names included, so a leftover would show). */
function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath.slice(dir.length + 1), e.name))
    .sort();
}

describe('per-store export files', () => {
  it('writes one file per store with its new rows, product-level rows under _all, and never re-exports', async () => {
    const db = await openTempDb();
    const dir = tempDir();
    await deliver(db, [
      approval(1, { store_id: STORE_A, approved_price: '1.10' }),
      approval(2, { store_id: STORE_B, sku: 'has,comma "quoted"' }),
      approval(3, { store_id: null }),
      approval(4, { store_id: STORE_A, approved_price: '1.20', effective_date: null }),
    ]);
    const files = await exportStoreFiles(db, dir, { format: 'csv' });
    expect(files.map((f) => [f.store_key, f.from_seq, f.to_seq, f.rows])).toEqual([
      ['_all', 3, 3, 1],
      [STORE_A, 1, 4, 2],
      [STORE_B, 2, 2, 1],
    ]);
    expect(tree(dir)).toEqual([
      `_all/prices-000000000003-000000000003.csv`,
      `${STORE_A}/prices-000000000001-000000000004.csv`,
      `${STORE_B}/prices-000000000002-000000000002.csv`,
    ]);
    const lines = readFileSync(join(dir, STORE_A, exportFileName(1, 4, 'csv')), 'utf8').split('\r\n');
    expect(lines[0]).toBe(
      'seq,kind,approval_id,predecessor_id,item_id,sku,store_id,approved_price,currency_code,effective_date,' +
        'recorded_at',
    );
    expect(lines[1]).toMatch(new RegExp(`^1,price,1,,ITEM-1,SKU-1,${STORE_A},1.10,EUR,2026-11-01,20`));
    expect(lines[2]).toMatch(new RegExp(`^4,price,4,,ITEM-4,SKU-4,${STORE_A},1.20,EUR,,20`));
    expect(lines[3]).toBe('');
    const b = readFileSync(join(dir, STORE_B, exportFileName(2, 2, 'csv')), 'utf8');
    expect(b).toContain(',"has,comma ""quoted""",');
    expect(statSync(join(dir, STORE_A, exportFileName(1, 4, 'csv'))).mode & 0o007).toBe(0);

    expect(await exportStoreFiles(db, dir, { format: 'csv' })).toEqual([]);
    const cancelled = approval(2, { store_id: STORE_B, cancelled_at: '2026-11-21T00:00:00Z' });
    await deliver(db, [approval(5, { store_id: STORE_B }), cancelled]);
    const next = await exportStoreFiles(db, dir, { format: 'csv' });
    expect(next.map((f) => [f.store_key, f.from_seq, f.to_seq, f.rows])).toEqual([[STORE_B, 5, 6, 2]]);
    const withdrawal = readFileSync(next[0]?.path ?? '', 'utf8').split('\r\n')[2];
    expect(withdrawal).toMatch(/^6,withdrawal,2,/);
  });

  it('JSON Lines: one object per row with the feed columns; big backlogs split by maxRowsPerFile', async () => {
    const db = await openTempDb();
    const dir = tempDir();
    await deliver(db, [1, 2, 3, 4, 5].map((id) => approval(id, { store_id: STORE_A })));
    const files = await exportStoreFiles(db, dir, { format: 'jsonl', maxRowsPerFile: 2 });
    expect(files.map((f) => [f.from_seq, f.to_seq])).toEqual([[1, 2], [3, 4], [5, 5]]);
    const rows = readFileSync(files[1]?.path ?? '', 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(rows.map((r) => r.seq)).toEqual([3, 4]);
    expect(rows[0]).toMatchObject({ kind: 'price', approval_id: 3, predecessor_id: null, approved_price: '10.49' });
    expect(Object.keys(rows[0] ?? {})).toHaveLength(11);
  });

  it('after a failure mid-export, the pending range keeps its name; later rows go to the next file', async () => {
    const db = await openTempDb();
    const dir = tempDir();
    await deliver(db, [approval(1, { store_id: STORE_A }), approval(2, { store_id: STORE_A })]);
    writeFileSync(join(dir, STORE_A), 'in the way'); // the store folder cannot be created
    await expect(exportStoreFiles(db, dir, { format: 'csv' })).rejects.toThrow();
    expect(await sqlRow(db, 'SELECT last_seq, pending_to_seq FROM outbox_exports')).toEqual({
      last_seq: 0,
      pending_to_seq: 2,
    });

    await deliver(db, [approval(3, { store_id: STORE_A })]);
    rmSync(join(dir, STORE_A));
    const files = await exportStoreFiles(db, dir, { format: 'csv' });
    expect(files.map((f) => [f.from_seq, f.to_seq])).toEqual([[1, 2], [3, 3]]);
    expect(tree(dir)).toEqual([
      `${STORE_A}/prices-000000000001-000000000002.csv`,
      `${STORE_A}/prices-000000000003-000000000003.csv`,
    ]);
  });

  it('two processes exporting at once (the daemon and a one-shot pull) choose each range once: no row in two files, no checkpoint back', async () => {
    const db = await openTempDb();
    const other = await reopenTempDb(db); // the other process's connection
    const dir = tempDir();
    await deliver(db, Array.from({ length: 10 }, (_, i) => approval(i + 1, { store_id: STORE_A })));
    // The other process chose (0, 6] and is still writing its file when this one runs.
    expect(await beginExportRange(other, STORE_A, 0, 6)).toBe(true);
    // A range chosen from the same state, later, is refused: the chooser reads the state again.
    expect(await beginExportRange(db, STORE_A, 0, 4)).toBe(false);
    const files = await exportStoreFiles(db, dir, { format: 'csv', maxRowsPerFile: 4 });
    expect(files.map((f) => [f.from_seq, f.to_seq])).toEqual([[1, 6], [7, 10]]); // the pending range first, under its name
    // The other process ends: its completion is a no-op, its next choice (from what it read before) refused.
    await completeExportRange(other, STORE_A, 6, join(dir, STORE_A, exportFileName(1, 6, 'csv')));
    expect(await beginExportRange(other, STORE_A, 6, 10)).toBe(false);
    expect(await sqlRow(db, 'SELECT last_seq, pending_to_seq FROM outbox_exports')).toEqual({ last_seq: 10, pending_to_seq: null });
    expect(await exportStoreFiles(other, dir, { format: 'csv', maxRowsPerFile: 4 })).toEqual([]);
    expect(tree(dir)).toEqual([`${STORE_A}/prices-000000000001-000000000006.csv`, `${STORE_A}/prices-000000000007-000000000010.csv`]);
  });

  it('queues concurrent runs; odd store ids get a safe folder name', async () => {
    const db = await openTempDb();
    const dir = tempDir();
    await deliver(db, [approval(1, { store_id: '../etc' }), approval(2, { store_id: STORE_A })]);
    const [first, second] = await Promise.all([
      exportStoreFiles(db, dir, { format: 'csv' }),
      exportStoreFiles(db, dir, { format: 'csv' }),
    ]);
    expect(first).toHaveLength(2);
    expect(second).toEqual([]);
    expect(storeFolderName('../etc')).toBe('_id-2e2e2f657463');
    expect(storeFolderName(STORE_A)).toBe(STORE_A);
    expect(tree(dir)[0]).toBe('_id-2e2e2f657463/prices-000000000001-000000000001.csv');
    await expect(exportStoreFiles(db, dir, { format: 'xml' as 'csv' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });
});
