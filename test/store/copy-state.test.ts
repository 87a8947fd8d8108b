/**
 * `state migrate --to postgres` (src/store/copy-state.ts): a SQLite state with something in every table family is
 * copied into an empty PostgreSQL schema; every table reads back the same, seqs and ids kept, the database id kept,
 * the next feed row and file get the next numbers, and a second copy into the same schema is refused without
 * changing it. Runs in the postgres project (it needs a cluster).
 */
import { describe, expect, it } from 'vitest';
import { markAcknowledged, markConflicts } from '../../src/store/acknowledgements.ts';
import { recordWithdrawal, storeDeliveredPage } from '../../src/store/approved-prices.ts';
import { copyState } from '../../src/store/copy-state.ts';
import { pendingDeliveryIntent, recordDeliveryIntent } from '../../src/store/delivery-intents.ts';
import { completeListing, upsertMirrorPage } from '../../src/store/mirrors.ts';
import { beginExportRange, completeExportRange, recordExportScan } from '../../src/store/outbox-exports.ts';
import { ackConsumer, maxSeq, readFeed } from '../../src/store/price-feed.ts';
import { beginClaim, commitBatch, finishFile, setStatus } from '../../src/store/push-ledger.ts';
import { listTables } from '../../src/store/schema-info.ts';
import { sqlOf } from '../../src/store/sql-db.ts';
import type { StateDb } from '../../src/store/state-db.ts';
import { deliver, STORE_A } from '../outbox/support.ts';
import { TEST_BACKEND } from '../support/state-db.ts';
import { approval, openTempDb, openTempSqlite } from './support.ts';

/** Something in every table family, as a site that ran for a while has. */
async function fill(db: StateDb): Promise<void> {
  await deliver(db, [approval(1, { store_id: STORE_A }), approval(2, { store_id: null }), approval(3)]);
  await markAcknowledged(db, [1]);
  await markConflicts(db, [{ id: 2, reason: 'superseded' }]);
  await recordWithdrawal(db, approval(3, { cancelled_at: '2026-11-21T09:00:00Z' }));
  await recordDeliveryIntent(db, { requestId: '99999999-9999-4999-8999-999999999999', filters: { store_id: STORE_A }, cursor: 'c-9' });
  await ackConsumer(db, 'pos-1', 2);
  await beginExportRange(db, STORE_A, 0, 1);
  await completeExportRange(db, STORE_A, 1, '/exports/a/prices-1-1.csv');
  await recordExportScan(db, 1);
  const file = await beginClaim(db, {
    source: 'erp', entity: 'products', mode: 'bulk', originalName: 'p.csv', inbox: '/in', processingPath: '/in/processing/1-p.csv',
    sha256: 'ab', size: 10, batchSize: 1000, forced: false,
  });
  await setStatus(db, file, 'claimed');
  // Row fates (0006): key hashes as bytes, every problem of a row, a row superseded after it was sent, skipped rows.
  const keyHashes = new Uint8Array([1, 0, 0, 0, 0xfe, 0xff, 0, 0x80, 2, 0, 0, 0]);
  await commitBatch(db, file, { index: 0, firstLine: 2, lastLine: 4, sent: 2, accepted: 2, failed: 0, superseded: 0, unchanged: 0, keyHashes }, [
    { line: 3, stage: 'local', field: 'price', code: 'invalid', message: 'bad, "quoted"\nline', raw: ['a', 'ü', ''],
      errors: [{ field: 'price', code: 'invalid', message: 'bad, "quoted"\nline' }, { field: 'item_id', code: 'required', message: 'missing' }] },
    { line: 4, stage: 'superseded', field: null, code: 'superseded', message: 'line 5 has the same key', raw: ['b'], sent: true },
  ]);
  await finishFile(db, file, { status: 'done', finalPath: '/in/archive/p.csv', rowsRead: 4, rowsSkipped: 1 });
  await upsertMirrorPage(db, 'products', [{ id: 'p1', item_id: 'A', updated_at: '2026-11-20T10:00:00Z', Farbe: 'rot' }], null);
  await completeListing(db, 'products');
}

async function dump(db: StateDb): Promise<Record<string, unknown[]>> {
  const sql = sqlOf(db);
  const out: Record<string, unknown[]> = {};
  for (const table of await listTables(sql)) out[table] = await sql.all(`SELECT * FROM ${table} ORDER BY 1, 2`);
  return out;
}

describe.runIf(TEST_BACKEND === 'postgres')('copyState (state migrate --to postgres)', () => {
  it('copies every table as it is, seqs, ids and the database id kept; the target goes on from there', async () => {
    const source = await openTempSqlite();
    await fill(source);
    const target = await openTempDb();
    const copied = await copyState(source, target, { batchSize: 2 });
    expect(copied.find((t) => t.table === 'price_feed')?.rows).toBe(4);

    const [before, after] = [await dump(source), await dump(target)];
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
    for (const table of Object.keys(before)) {
      if (table === 'agent_meta') continue;
      expect(after[table], table).toEqual(before[table]);
    }
    const meta = Object.fromEntries((after['agent_meta'] as { key: string; value: string }[]).map((r) => [r.key, r.value]));
    const sourceMeta = Object.fromEntries((before['agent_meta'] as { key: string; value: string }[]).map((r) => [r.key, r.value]));
    expect(meta).toMatchObject({ database_id: sourceMeta['database_id'], created_at: sourceMeta['created_at'], migrated_from: source.location });

    // The interrupted pull is replayed from the copy, the feed goes on at the next seq, the ledger at the next id.
    const pending = await pendingDeliveryIntent(target);
    expect(pending).toMatchObject({ request_id: '99999999-9999-4999-8999-999999999999', cursor: 'c-9', filters: { store_id: STORE_A } });
    await storeDeliveredPage(target, pending?.id ?? 0, [approval(4)], null);
    expect(await maxSeq(target)).toBe(5);
    expect((await readFeed(target, 4)).map((r) => r.approval_id)).toEqual([4]);
    const next = await beginClaim(target, {
      source: 'erp', entity: 'products', mode: 'bulk', originalName: 'q.csv', inbox: '/in', processingPath: '', sha256: '', size: 1, batchSize: 10, forced: false,
    });
    expect(next).toBe(2);
    expect(await ackConsumer(target, 'pos-1', 5)).toMatchObject({ last_seq: 5 });
  });

  it('refuses a target that holds anything, and leaves it as it was', async () => {
    const source = await openTempSqlite();
    await fill(source);
    const target = await openTempDb();
    await deliver(target, [approval(7)]);
    const before = await dump(target);
    await expect(copyState(source, target)).rejects.toThrow(expect.objectContaining({ code: 'TARGET_NOT_EMPTY' }) as Error);
    expect(await dump(target)).toEqual(before);
  });

  it('a copy that fails half-way leaves the target empty, and can be run again', async () => {
    const source = await openTempSqlite();
    await fill(source);
    const target = await openTempDb();
    // A row the target refuses (a CHECK the source never had), late in the copy: the whole copy rolls back.
    await sqlOf(target).write((tx) => tx.run(`ALTER TABLE push_rejects ADD CONSTRAINT no_quotes CHECK (position('"' in message) = 0)`));
    await expect(copyState(source, target)).rejects.toThrow(/no_quotes/);
    expect(await maxSeq(target)).toBe(0);
    await sqlOf(target).write((tx) => tx.run(`ALTER TABLE push_rejects DROP CONSTRAINT no_quotes`));
    await copyState(source, target);
    expect(await maxSeq(target)).toBe(4);
  });
});
