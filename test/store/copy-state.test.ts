/**
 * `state migrate --to postgres` (src/store/copy-state.ts): a SQLite state with rows in every table the migrations
 * create (the list is read from the schema, so a new table without rows in the fixture fails the test), delta state
 * with platform ids kept as 16 bytes included, is copied into an empty PostgreSQL schema; every table reads back the
 * same (values as the agent reads them on each backend), seqs and ids kept, the database id kept,
 * the next feed row and file get the next numbers, and a second copy into the same schema is refused without
 * changing it. Runs in the postgres project (it needs a cluster).
 */
import { describe, expect, it } from 'vitest';
import { markAcknowledged, markConflicts } from '../../src/store/acknowledgements.ts';
import { API_FACTS, recordApiFact, recordJobPoll, recordRateLimitedUntil } from '../../src/store/api-state.ts';
import { recordWithdrawal, storeDeliveredPage } from '../../src/store/approved-prices.ts';
import { copyState } from '../../src/store/copy-state.ts';
import { pendingDeliveryIntent, recordDeliveryIntent } from '../../src/store/delivery-intents.ts';
import { deltaScope, keyDetail, platformIdOf, rememberAccepted, saveDeltaFile, useFingerprint } from '../../src/store/delta-state.ts';
import { recordApplied, recordLastSeen } from '../../src/store/feed-consumers.ts';
import { gridStream } from '../../src/store/mirror-tables.ts';
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
  await upsertMirrorPage(db, 'product_store', [{ id: 'ps1', item_id: 'A', store_id: STORE_A, updated_at: '2026-11-20T10:00:00Z' }], null);
  await upsertMirrorPage(db, 'transactions', [{ transaction_id: 'T1', store_id: STORE_A, timestamp: '2026-11-21T12:00:00Z', price: '2.50' }], 'c-t');
  await upsertMirrorPage(db, 'competitor_prices', [{ id: 42, competitor_name: 'Acme', observed_at: '2026-11-21T00:00:00Z', regular_price: '4.99' }], null);
  await upsertMirrorPage(db, gridStream('g-1'), [{ grid_item_id: 7, price: '3.00' }], null);
  // API pacing (0005): a Retry-After window, a job's next poll, a fact learned from the server.
  await recordRateLimitedUntil(db, Date.parse('2026-11-22T11:00:00Z'));
  await recordJobPoll(db, 'job-1', 'processing', Date.parse('2026-11-22T10:00:05Z'));
  await recordApiFact(db, API_FACTS.ackBodyShape, 'ids');
  // The feed API's consumers (0007): last seen, and what a store confirmed it applied.
  await recordLastSeen(db, new Map([['till-a', '2026-11-22T09:59:00.000Z']]));
  await recordApplied(db, 'till-a', STORE_A, 2, '2026-11-22T09:58:00Z');
  await fillDelta(db, file);
  await fillHa(db);
}

/**
 * Delta push (0008, 0014, 0015, 0020): a scope, a file's comparison, keys the API accepted with every kind of platform
 * id: a UUID (16 bytes on SQLite), another text id, an integer, none; and keys the API refused (64-bit hashes).
 */
async function fillDelta(db: StateDb, file: number): Promise<void> {
  const scope = await deltaScope(db, 'erp-delta', 'product_store');
  const { generation } = await useFingerprint(db, scope, 'fp-1');
  const keys = DELTA_IDS.map((platformId, i) => ({
    keyHash: KEY_HASHES[i] ?? 0n, content: BigInt(1000 + i), price: `1.0${i}`, platformId,
    keyText: `K${i}`, lineHash: i === 0 ? Number.NaN : 0xfff_ffff_ffff + i,
  }));
  await commitBatch(db, file, { index: 1, firstLine: 5, lastLine: 8, sent: 4, accepted: 4, failed: 0, superseded: 0, unchanged: 0 }, [],
    rememberAccepted(scope.id, generation, file, keys, [0x7fff_ffff_ffff_ffffn, -0x7fff_ffff_ffff_fff0n]));
  await saveDeltaFile(db, {
    file_id: file, mode: 'delta', reason: null, known: 4, unchanged: 0, changed: 1, new_keys: 3, remapped: 0, platform_changed: 0, refused_before: 1, forced: 0, missing: 0,
    held_at: '2026-11-22T10:00:00Z', held_path: '/in/held/1-p.csv', brakes: '{"missing":0}',
  });
}

const DELTA_IDS = ['0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9', 'ext-77', 123456, null] as const;
/** 64-bit key hashes (signed, as stored): beyond 2^53 a number cannot hold them; the first is the smallest there is. */
const KEY_HASHES = [-0x7fff_ffff_ffff_ffffn - 1n, 0x1234_5678_9abc_def1n, -0x0fed_cba9_8765_4321n, 5n];

/**
 * HA (0009) needs PostgreSQL, so nothing writes these tables on SQLite: a row as one looks, so that the copy is proven
 * for every table the migrations create.
 */
async function fillHa(db: StateDb): Promise<void> {
  await sqlOf(db).write(async (tx) => {
    await tx.run(`INSERT INTO ha_lease (id, holder, token, acquired_at, expires_at) VALUES (1, 'node-a', 3, '2026-11-22T10:00:00.000Z', '2026-11-22T10:00:15.000Z')`);
    await tx.run(`INSERT INTO ha_nodes (node, role, token, started_at, seen_at, version) VALUES ('node-a', 'active', 3, '2026-11-22T09:00:00.000Z', '2026-11-22T10:00:00.000Z', '1.0.0')`);
  });
}

/**
 * Every table's rows, values as the agent reads them on either backend: 64-bit hashes as exact text (a number would
 * round them, and PostgreSQL refuses to read them as numbers), a platform id as delta-state reads it (16 bytes on
 * SQLite, text on PostgreSQL), the HA tables' times as ISO text in UTC (timestamptz on PostgreSQL).
 */
async function dump(db: StateDb): Promise<Record<string, unknown[]>> {
  const sql = sqlOf(db);
  const iso = (c: string) => (sql.dialect.name === 'sqlite' ? c : `to_char(${c} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ${c}`);
  const select: Record<string, string> = {
    delta_keys: 'scope_id, CAST(key_hash AS TEXT) AS key_hash, CAST(content AS TEXT) AS content, generation, price, platform_id, file_id, key_text, line_hash',
    delta_refused: 'scope_id, CAST(key_hash AS TEXT) AS key_hash',
    ha_lease: `id, holder, token, ${iso('acquired_at')}, ${iso('expires_at')}`,
    ha_nodes: `node, role, token, ${iso('started_at')}, ${iso('seen_at')}, version`,
  };
  const out: Record<string, unknown[]> = {};
  for (const table of await listTables(sql)) {
    const rows = await sql.all<Record<string, unknown>>(`SELECT ${select[table] ?? '*'} FROM ${table} ORDER BY 1, 2`);
    out[table] = rows.map((row) => (table === 'delta_keys' ? { ...row, platform_id: row['platform_id'] === null ? null : String(platformIdOf(row['platform_id'])) } : row));
  }
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
    // Every table the migrations create holds rows here: a new table must get rows in fill() to pass.
    const empty = Object.entries(before).filter(([, rows]) => rows.length === 0).map(([table]) => table);
    expect(empty, 'tables without rows in the fixture').toEqual([]);
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

    // The delta state reads back as the agent reads it: every platform id, the UUID as its 36 characters.
    const scope = await deltaScope(target, 'erp-delta', 'product_store');
    const details = [];
    for (const hash of KEY_HASHES) details.push(await keyDetail(target, scope.id, hash));
    expect(details.map((d) => d.platform_id)).toEqual(DELTA_IDS.map((id) => (id === null ? null : String(id))));
    expect(details.map((d) => d.key_text)).toEqual(['K0', 'K1', 'K2', 'K3']);
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
