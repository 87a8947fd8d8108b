/**
 * How often the pipeline of one file reads the push ledger (issue 29 point 3): the file's own row is kept by its run
 * from the claim on (src/ingest/file/file-run.ts) and never read back after a step; a file claimed earlier has its row
 * read once. The row counts (the batches' and rejects' tallies) are read where the ledger's own word is needed: after
 * the send, and for a resumed file before it. Pinned, so a step that starts querying again shows here. Before the run
 * kept the row, a new bulk file read it 5 times and its tallies 2 or 3 times.
 */
import { describe, expect, it } from 'vitest';
import { sqlOf, type SqlParams } from '../../src/store/sql-db.ts';
import type { StateDb } from '../../src/store/state-db.ts';
import { processClaimed } from '../../src/ingest/file/push-file.ts';
import { usePushHarness } from '../support/push-harness.ts';
import { drive } from '../support/manual-clock.ts';

const { h, clock } = usePushHarness();

interface LedgerReads {
  /** `SELECT * FROM push_files WHERE id = ?`: the file's own row. */
  row: number;
  /** The file's row counts (push-ledger.ts ledgerTallies: its first statement). */
  tallies: number;
}

/** Counts the ledger reads `run` makes on `db` (the real database: its read methods are wrapped, then restored). */
async function ledgerReads<T>(db: StateDb, run: () => Promise<T>): Promise<{ result: T; reads: LedgerReads }> {
  const sql = sqlOf(db);
  const reads: LedgerReads = { row: 0, tallies: 0 };
  const count = (text: string) => {
    if (/^SELECT \* FROM push_files WHERE id = \?$/.test(text.trim())) reads.row += 1;
    if (/^SELECT count\(\*\) AS batches\b.*\bFROM push_batches\b/s.test(text.trim())) reads.tallies += 1;
  };
  const methods = ['get', 'all', 'value'] as const;
  for (const m of methods) {
    const original = Reflect.get(sql, m) as (text: string, params?: SqlParams) => Promise<unknown>;
    Object.defineProperty(sql, m, {
      configurable: true,
      value: (text: string, params?: SqlParams) => {
        count(text);
        return Reflect.apply(original, sql, [text, params]);
      },
    });
  }
  try {
    return { result: await run(), reads };
  } finally {
    for (const m of methods) Reflect.deleteProperty(sql, m);
  }
}

function transactions(prefix: string, rows: number): string {
  const lines = ['transaction_id,item_id,transaction_timestamp,quantity,price'];
  for (let i = 0; i < rows; i += 1) lines.push(`${prefix}-${i},ITEM-${i},2026-11-20T08:00:00Z,1,1.${String(i % 100).padStart(2, '0')}`);
  return `${lines.join('\n')}\n`;
}

describe('ledger reads of one file', () => {
  it('a new bulk file', async () => {
    const source = await h.source('transactions', { batch_size: 5 });
    const { result, reads } = await ledgerReads(h.db, () => drive(clock, h.push(source, 'tx.csv', transactions('B', 12))));
    expect(result.outcome).toBe('done');
    // Once after the send: the reconciliation checks what the ledger committed.
    expect(reads).toEqual({ row: 0, tallies: 1 });
  });

  it('a new products file (its header read for custom columns)', async () => {
    const source = await h.source('products', { batch_size: 5 });
    const csv = 'item_id,sku,product_name\nP1,P1,Apfel\nP2,P2,Birne\n';
    const { result, reads } = await ledgerReads(h.db, () => drive(clock, h.push(source, 'p.csv', csv)));
    expect(result.outcome).toBe('done');
    // duplicate_keys `last` asks how many rows were accepted before it looks for keys repeated across batches.
    expect(reads).toEqual({ row: 0, tallies: 2 });
  });

  it('a new import file', async () => {
    const source = await h.source('transactions', { mode: 'import' });
    const { result, reads } = await ledgerReads(h.db, () => drive(clock, h.push(source, 'imp.csv', transactions('I', 12))));
    expect(result.outcome).toBe('done');
    expect(reads).toEqual({ row: 0, tallies: 1 });
  });

  it('a new delta file', async () => {
    const source = await h.source('products', { delta: true, batch_size: 5 });
    const csv = 'item_id,sku,product_name\nP1,P1,Apfel\nP2,P2,Birne\n';
    const { result, reads } = await ledgerReads(h.db, () => drive(clock, h.push(source, 'd.csv', csv)));
    expect(result.outcome).toBe('done');
    expect(reads).toEqual({ row: 0, tallies: 2 });
  });

  it('a duplicate', async () => {
    const source = await h.source('transactions', { batch_size: 5 });
    await drive(clock, h.push(source, 'once.csv', transactions('D', 3)));
    const { result, reads } = await ledgerReads(h.db, () => drive(clock, h.push(source, 'again.csv', transactions('D', 3))));
    expect(result.outcome).toBe('duplicate');
    expect(reads).toEqual({ row: 0, tallies: 0 });
  });

  it('a deferred file, resumed', async () => {
    const source = await h.source('transactions', { batch_size: 5 });
    h.sandbox.control.setFaults({ error_503: 1, paths: ['POST /v1/transactions/bulk'] });
    const deferred = await ledgerReads(h.db, () => drive(clock, h.push(source, 'later.csv', transactions('R', 12))));
    h.sandbox.control.setFaults(null);
    expect(deferred.result.outcome).toBe('deferred');
    expect(deferred.reads).toEqual({ row: 0, tallies: 0 });
    if (deferred.result.outcome !== 'deferred') return;
    const fileId = deferred.result.file.id;
    const resumed = await ledgerReads(h.db, () => drive(clock, processClaimed(h.deps, source, fileId)));
    expect(resumed.result.outcome).toBe('done');
    // The row read once to build the run; the tallies before the send (the probation resumes) and after it.
    expect(resumed.reads).toEqual({ row: 1, tallies: 2 });
  });
});
