import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { describe, expect, it } from 'vitest';
import { getAckState, idsToAcknowledge } from '../../src/store/acknowledgements.ts';
import { getApprovedPrice } from '../../src/store/approved-prices.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { SQLITE_MIGRATIONS as MIGRATIONS } from '../../src/store/migration-list.ts';
import { openSqlite } from '../../src/store/sqlite/open-sqlite.ts';
import { approval, onCleanup, tempDir } from './support.ts';

/** A database file migrated up to and including `last` (the state an older agent left behind). */
async function databaseAt(path: string, last: string): Promise<BetterSqlite3.Database> {
  const upTo = Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => name <= last)); // names sort in run order
  const sqlite = new BetterSqlite3(path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  const kysely = new Kysely({ dialect: new SqliteDialect({ database: sqlite }) });
  await migrateToLatest(kysely, upTo);
  return sqlite;
}

function columns(sqlite: BetterSqlite3.Database, table: string): string[] {
  return sqlite.prepare(`SELECT name FROM pragma_table_xinfo(?)`).pluck().all(table) as string[];
}

describe('migration 0004_ack_state', () => {
  it('moves the acknowledgement state of a 0003 database into approval_acks, every state preserved', async () => {
    const path = join(tempDir(), 'state.db');
    const old = await databaseAt(path, '0003_push');
    expect(old.prepare('SELECT name FROM kysely_migration ORDER BY name').pluck().all()).toEqual([
      '0001_base',
      '0002_pull_outbox',
      '0003_push',
    ]);
    expect(columns(old, 'approved_prices')).toEqual(expect.arrayContaining(['ack_status', 'conflict_reason', 'acked_at']));
    old.prepare(`INSERT INTO delivery_intents (id, job, request_id, filters, status, created_at)
      VALUES (1, 'approved_prices', 'r-1', '{}', 'done', '2026-11-20T10:00:00Z')`).run();
    const insert = old.prepare(
      `INSERT INTO approved_prices (id, grid_id, grid_item_id, item_id, sku, store_id, current_price, proposed_price,
         approved_price, effective_date, currency_code, proposal_source, source, approved_at, approved_by_user_id,
         export_status, cancelled_at, record, intent_id, received_at, ack_status, conflict_reason, acked_at)
       VALUES (@id, @grid_id, @grid_item_id, @item_id, @sku, @store_id, @current_price, @proposed_price,
         @approved_price, @effective_date, @currency_code, @proposal_source, @source, @approved_at,
         @approved_by_user_id, @export_status, @cancelled_at, @record, @intent_id, '2026-11-20T10:00:00Z',
         @ack_status, @conflict_reason, @acked_at)`,
    );
    const states = [
      { id: 1, ack_status: 'pending', conflict_reason: null, acked_at: null, intent_id: 1 },
      { id: 2, ack_status: 'acknowledged', conflict_reason: null, acked_at: '2026-11-20T10:00:05Z', intent_id: 1 },
      { id: 3, ack_status: 'conflict', conflict_reason: 'cancelled', acked_at: '2026-11-20T10:00:06Z', intent_id: 1 },
      { id: 4, ack_status: null, conflict_reason: null, acked_at: null, intent_id: null }, // from a history read
      { id: 5, ack_status: 'pending', conflict_reason: null, acked_at: null, intent_id: 1 },
    ];
    for (const state of states) {
      const a = approval(state.id, state.id === 3 ? { cancelled_at: '2026-11-20T09:00:00Z' } : {});
      insert.run({ ...a, cancelled_at: a.cancelled_at ?? null, record: JSON.stringify(a), ...state });
    }
    old.close();

    const db = await openSqlite(path);
    onCleanup(() => db.close());
    const sqlite = db.sqlite;
    expect(sqlite.prepare('SELECT name FROM kysely_migration ORDER BY name').pluck().all()).toEqual(
      Object.keys(MIGRATIONS).sort(),
    );
    expect(sqlite.prepare('SELECT * FROM approval_acks ORDER BY approval_id').all()).toEqual([
      { approval_id: 1, status: 'pending', conflict_reason: null, acked_at: null },
      { approval_id: 2, status: 'acknowledged', conflict_reason: null, acked_at: '2026-11-20T10:00:05Z' },
      { approval_id: 3, status: 'conflict', conflict_reason: 'cancelled', acked_at: '2026-11-20T10:00:06Z' },
      { approval_id: 5, status: 'pending', conflict_reason: null, acked_at: null },
    ]);
    expect(await getAckState(db, 4)).toBeUndefined();
    expect(await idsToAcknowledge(db)).toEqual([1, 5]);

    // The old columns and their index are gone; the versions themselves are untouched.
    const approvedColumns = columns(sqlite, 'approved_prices');
    for (const gone of ['ack_status', 'conflict_reason', 'acked_at']) expect(approvedColumns).not.toContain(gone);
    expect(
      sqlite.prepare(`SELECT name FROM sqlite_schema WHERE name = 'approved_prices_ack_pending'`).pluck().get(),
    ).toBeUndefined();
    expect(sqlite.prepare('SELECT count(*) FROM approved_prices').pluck().get()).toBe(5);
    for (const { id } of states) {
      const stored = await getApprovedPrice(db, id);
      expect(JSON.parse(stored?.record ?? '')).toEqual(approval(id, id === 3 ? { cancelled_at: '2026-11-20T09:00:00Z' } : {}));
      expect(JSON.parse(stored?.trace ?? '')).toEqual(approval(id).trace); // generated columns still read the record
    }
    expect(sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(sqlite.pragma('foreign_key_check')).toEqual([]);

    // The constraints hold for every writer: a conflict needs its reason, and only the states of ACK_STATUSES exist.
    const write = (sql: string) => () => sqlite.prepare(sql).run();
    expect(write(`UPDATE approval_acks SET status = 'conflict' WHERE approval_id = 1`)).toThrow(/CHECK/);
    expect(write(`UPDATE approval_acks SET status = 'done' WHERE approval_id = 1`)).toThrow(/CHECK/);
    expect(write(`INSERT INTO approval_acks (approval_id, status) VALUES (99, 'pending')`)).toThrow(/FOREIGN KEY/);
  });
});

describe('migration 0005_api_state', () => {
  it('rebuilds approval_acks with the parked state, every row kept; adds api_pacing and api_facts', async () => {
    const path = join(tempDir(), 'state.db');
    const old = await databaseAt(path, '0004_ack_state');
    old.prepare(`INSERT INTO delivery_intents (id, job, request_id, filters, status, created_at)
      VALUES (1, 'approved_prices', 'r-1', '{}', 'done', '2026-11-20T10:00:00Z')`).run();
    const insert = old.prepare(
      `INSERT INTO approved_prices (id, grid_id, grid_item_id, proposed_price, approved_price, currency_code, proposal_source,
         source, approved_at, approved_by_user_id, export_status, record, intent_id, received_at)
       VALUES (?, 'g', 1, '1.00', '1.00', 'EUR', 'dp', 'dp', '2026-11-20T09:00:00Z', 'u', 'pending', ?, 1, '2026-11-20T10:00:00Z')`,
    );
    const acks = [
      { approval_id: 1, status: 'pending', conflict_reason: null, acked_at: null },
      { approval_id: 2, status: 'acknowledged', conflict_reason: null, acked_at: '2026-11-20T10:00:05Z' },
      { approval_id: 3, status: 'conflict', conflict_reason: 'cancelled', acked_at: '2026-11-20T10:00:06Z' },
    ];
    for (const ack of acks) {
      insert.run(ack.approval_id, JSON.stringify(approval(ack.approval_id)));
      old.prepare('INSERT INTO approval_acks (approval_id, status, conflict_reason, acked_at) VALUES (@approval_id, @status, @conflict_reason, @acked_at)').run(ack);
    }
    old.close();

    const db = await openSqlite(path);
    onCleanup(() => db.close());
    const sqlite = db.sqlite;
    expect(sqlite.prepare('SELECT * FROM approval_acks ORDER BY approval_id').all()).toEqual(acks);
    expect(await idsToAcknowledge(db)).toEqual([1]);
    expect(sqlite.prepare(`SELECT name FROM sqlite_schema WHERE name = 'approval_acks_pending'`).pluck().get()).toBe('approval_acks_pending');
    const write = (sql: string) => () => sqlite.prepare(sql).run();
    expect(write(`UPDATE approval_acks SET status = 'parked' WHERE approval_id = 1`)).toThrow(/CHECK/); // needs its reason
    write(`UPDATE approval_acks SET status = 'parked', conflict_reason = 'refused with 422' WHERE approval_id = 1`)();
    expect(write(`INSERT INTO approval_acks (approval_id, status) VALUES (99, 'pending')`)).toThrow(/FOREIGN KEY/);
    expect(columns(sqlite, 'api_pacing')).toEqual(['key', 'until_ms', 'detail', 'updated_at']);
    expect(columns(sqlite, 'api_facts')).toEqual(['key', 'value', 'learned_at']);
    expect(sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
  });
});

describe('migrations landing out of number order', () => {
  // Numbers are reserved per branch and land on main in any order (0007 landed before 0005 and 0006).
  it.each([
    { missing: '0005_api_state', table: 'api_pacing', column: 'until_ms' },
    { missing: '0006_row_fates', table: 'push_files', column: 'rows_unchanged' },
  ])('a database migrated by a build without $missing takes it at the next open', async ({ missing, table, column }) => {
    const path = join(tempDir(), 'state.db');
    const sqlite = new BetterSqlite3(path);
    sqlite.pragma('journal_mode = WAL');
    const kysely = new Kysely({ dialect: new SqliteDialect({ database: sqlite }) });
    await migrateToLatest(kysely, Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => name !== missing)));
    expect(sqlite.prepare('SELECT name FROM kysely_migration ORDER BY name').pluck().all()).toContain('0007_feed');
    expect(columns(sqlite, table)).not.toContain(column);
    await kysely.destroy();

    const db = await openSqlite(path);
    onCleanup(() => db.close());
    expect(db.sqlite.prepare('SELECT name FROM kysely_migration ORDER BY name').pluck().all()).toEqual(Object.keys(MIGRATIONS).sort());
    expect(columns(db.sqlite, table)).toContain(column);
  });
});

describe('migration 0019_merged_rows', () => {
  it('rebuilds push_rejects with the merged stage, every row kept; adds push_files.rows_merged', async () => {
    const path = join(tempDir(), 'state.db');
    const old = await databaseAt(path, '0018_push_mapping');
    old.prepare(`INSERT INTO push_files (id, source, entity, mode, original_name, inbox, processing_path, sha256, size, batch_size, status, claimed_at)
      VALUES (1, 's', 'transactions', 'bulk', 'till.csv', '/in', '/in/processing/till.csv', 'abc', 10, 1000, 'done', '2026-11-20T10:00:00Z')`).run();
    const rejects = [
      { file_id: 1, line: 2, stage: 'local', field: 'item_id', code: 'required', message: 'missing', raw: '["a"]', errors: '[{"field":"item_id"}]', sent: 0 },
      { file_id: 1, line: 3, stage: 'superseded', field: null, code: 'superseded', message: 'superseded by line 4', raw: '["b"]', errors: null, sent: 1 },
      { file_id: 1, line: 5, stage: 'api', field: null, code: 'rejected', message: 'refused', raw: '["c"]', errors: null, sent: 0 },
    ];
    const insert = old.prepare(`INSERT INTO push_rejects (file_id, line, stage, field, code, message, raw, errors, sent)
      VALUES (@file_id, @line, @stage, @field, @code, @message, @raw, @errors, @sent)`);
    for (const row of rejects) insert.run(row);
    const before = columns(old, 'push_rejects');
    expect(() => insert.run({ ...rejects[0], line: 6, stage: 'merged' })).toThrow(/CHECK/);
    old.close();

    const db = await openSqlite(path);
    onCleanup(() => db.close());
    const sqlite = db.sqlite;
    expect(sqlite.prepare('SELECT * FROM push_rejects ORDER BY line').all()).toEqual(rejects);
    expect(columns(sqlite, 'push_rejects')).toEqual(before);
    const write = (sql: string) => () => sqlite.prepare(sql).run();
    write(`INSERT INTO push_rejects (file_id, line, stage, code, message, raw) VALUES (1, 6, 'merged', 'merged', 'merged into line 2', '[]')`)();
    expect(write(`INSERT INTO push_rejects (file_id, line, stage, code, message, raw) VALUES (1, 7, 'dropped', 'x', 'x', '[]')`)).toThrow(/CHECK/);
    expect(write(`INSERT INTO push_rejects (file_id, line, stage, code, message, raw) VALUES (99, 7, 'merged', 'x', 'x', '[]')`)).toThrow(/FOREIGN KEY/);
    expect(columns(sqlite, 'push_files')).toContain('rows_merged');
    expect(sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
  });
});
