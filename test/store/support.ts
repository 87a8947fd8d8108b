import { join } from 'node:path';
import pg from 'pg';
import type { ApprovedPrice } from '../../src/api/schemas/index.ts';
import { openSqlite, type SqliteOptions } from '../../src/store/sqlite/open-sqlite.ts';
import type { SqliteDb } from '../../src/store/sqlite/sqlite-db.ts';
import type { StateDb } from '../../src/store/state-db.ts';
import { afterThisTest, tempDirForTest } from '../support/after-test.ts';
import { openTestDb, type TestDbOptions } from '../support/state-db.ts';

/** A fresh directory under the OS temp dir, removed after the test. */
export function tempDir(): string {
  return tempDirForTest('pricing-agent-store-');
}

const dirs = new WeakMap<StateDb, string>();

/** A migrated state database on this run's backend (test/support/state-db.ts), closed after the test. */
export async function openTempDb(options: TestDbOptions = {}): Promise<StateDb> {
  const dir = tempDir();
  const db = await openTestDb(dir, options);
  dirs.set(db, dir);
  afterThisTest(() => db.close());
  return db;
}

/** A migrated SQLite database on disk (real WAL), whatever the run's backend; closed after the test. */
export async function openTempSqlite(options: SqliteOptions = {}): Promise<SqliteDb> {
  const db = await openSqlite(join(tempDir(), 'state.db'), options);
  afterThisTest(() => db.close());
  return db;
}

/** A second handle on the state of `db` (from openTempDb), as another process would open it; closed after the test. */
export async function reopenTempDb(db: StateDb, options: TestDbOptions = {}): Promise<StateDb> {
  const dir = dirs.get(db);
  if (dir === undefined) throw new Error('reopenTempDb: not a database of openTempDb');
  const other = await openTestDb(dir, options);
  afterThisTest(() => other.close());
  return other;
}

/** Registers an extra cleanup (e.g. a second handle on the same file). */
export function onCleanup(cleanup: () => Promise<void> | void): void {
  afterThisTest(cleanup);
}

/** A PostgreSQL client connected to `url`, ended after the test. */
export async function pgClient(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  onCleanup(() => client.end());
  return client;
}

/** A fixed clock: 2026-11-22T10:00:00Z, advanced by hand. */
export function fixedClock(start = Date.parse('2026-11-22T10:00:00Z')): {
  now: () => number;
  advance: (ms: number) => void;
} {
  let now = start;
  return { now: () => now, advance: (ms) => (now += ms) };
}

/** A valid approved price as the deliveries endpoint returns it; `overrides` replaces fields. */
export function approval(id: number, overrides: Partial<ApprovedPrice> = {}): ApprovedPrice {
  return {
    id,
    grid_id: '7f1c2b6e-1a2b-4c3d-8e9f-000000000001',
    grid_item_id: id * 10,
    item_id: `ITEM-${id}`,
    sku: `SKU-${id}`,
    store_id: 'b3a1c2d4-0000-4000-8000-000000000001',
    current_price: '9.99',
    proposed_price: '10.49',
    approved_price: '10.49',
    effective_date: '2026-11-01',
    currency_code: 'EUR',
    proposal_source: 'dp',
    source: 'dp',
    trace: [{ source: 'dp', column_key: 'price', source_job_id: 'job-1', payload: { elasticity: '-1.2' } }],
    approved_at: '2026-10-30T08:00:00Z',
    approved_by_user_id: '0b7e2f4a-0000-4000-8000-0000000000aa',
    approval_details: { run_id: 'r-1', policy_revision: 3, margin_pct: '21.5', method: 'automatic' },
    export_status: 'pending',
    exported_at: null,
    cancelled_at: null,
    predecessor_id: null,
    amendment_reason: null,
    delivery_channel: 'client_api',
    ...overrides,
  };
}
