import { existsSync, statSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { WalMaintenance, checkpoint, truncateWalIfFree, walSizeBytes } from '../../src/store/sqlite/wal-maintenance.ts';
import type { SqliteDb } from '../../src/store/sqlite/sqlite-db.ts';
import { onCleanup, openTempSqlite as openTempDb } from './support.ts';

async function writeSome(db: SqliteDb, n = 200): Promise<void> {
  await db.write(async (tx) => {
    const rows = Array.from({ length: n }, () => [`job-${Math.random()}`, 'c'.repeat(500)]);
    await tx.insert({ table: 'pull_state', columns: ['job', 'cursor', 'updated_at'] }, rows.map((r) => [...r, 'now']));
  });
}

describe('WAL maintenance', () => {
  it('PASSIVE checkpoints report the WAL size; TRUNCATE empties it when nobody reads', async () => {
    const db = await openTempDb();
    await writeSome(db);
    const passive = checkpoint(db, 'PASSIVE');
    expect(passive).toMatchObject({ mode: 'PASSIVE', busy: false });
    expect(passive.walBytes).toBeGreaterThan(0);
    expect(passive.checkpointedFrames).toBe(passive.logFrames);
    const truncated = truncateWalIfFree(db);
    expect(truncated).toMatchObject({ busy: false, walBytes: 0 });
  });

  it('a reader holding a snapshot makes TRUNCATE return busy at once instead of waiting busy_timeout', async () => {
    const db = await openTempDb({ busyTimeoutMs: 5000 });
    await writeSome(db);
    const reader = new BetterSqlite3(db.path, { readonly: true });
    onCleanup(() => {
      reader.close();
    });
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM pull_state').get();
    await writeSome(db); // frames the reader's snapshot does not include

    const started = Date.now();
    const result = truncateWalIfFree(db);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(result.busy).toBe(true);
    expect(walSizeBytes(db)).toBeGreaterThan(0);
    expect(db.sqlite.pragma('busy_timeout', { simple: true })).toBe(5000); // restored

    reader.exec('COMMIT');
    expect(truncateWalIfFree(db)).toMatchObject({ busy: false, walBytes: 0 });
  });

  it('ticks truncate only when the agent says it is idle', async () => {
    const db = await openTempDb();
    let idle = false;
    const maintenance = new WalMaintenance(db, { truncateAboveBytes: 0, isIdle: () => idle });
    await writeSome(db);
    expect(maintenance.tick()).toMatchObject({ mode: 'PASSIVE' });
    expect(walSizeBytes(db)).toBeGreaterThan(0);
    idle = true;
    expect(maintenance.tick()).toMatchObject({ mode: 'TRUNCATE', busy: false, walBytes: 0 });
    expect(maintenance.last?.walBytes).toBe(0);
  });

  it('runs on its timer until the database closes; close leaves no WAL behind', async () => {
    const db = await openTempDb();
    const results: unknown[] = [];
    // Its interval is faked: the test moves time on instead of sleeping for the timer.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    onCleanup(() => {
      vi.useRealTimers();
    });
    new WalMaintenance(db, { intervalMs: 10, onCheckpoint: (r) => results.push(r) }).start();
    await writeSome(db);
    vi.advanceTimersByTime(80);
    expect(results.length).toBe(8);
    await db.close();
    vi.advanceTimersByTime(40);
    expect(results.length).toBe(8);
    expect(!existsSync(`${db.path}-wal`) || statSync(`${db.path}-wal`).size === 0).toBe(true);
  });
});

describe('relaxed commits and the automatic checkpoint', () => {
  /** One transaction that adds `pages` pages of new rows (each row fills most of a 4 KiB page). */
  async function addPages(db: SqliteDb, pages: number, durability: 'full' | 'relaxed'): Promise<void> {
    await db.write(async (tx) => {
      const rows = Array.from({ length: pages }, () => [`job-${Math.random()}`, 'c'.repeat(3500), 'now']);
      await tx.insert({ table: 'pull_state', columns: ['job', 'cursor', 'updated_at'] }, rows);
    }, { durability });
  }
  const fileSize = (db: SqliteDb) => statSync(db.path).size;

  it('relaxed commits leave their pages in the WAL below its size limit; the next full commit checkpoints them', async () => {
    const db = await openTempDb();
    await addPages(db, 10, 'full');
    checkpoint(db, 'PASSIVE');
    const before = fileSize(db);
    // 1,500 pages over six commits: SQLite's default automatic checkpoint (1,000 pages) would have copied them into
    // the database file at the fourth or fifth commit.
    for (let i = 0; i < 6; i++) await addPages(db, 250, 'relaxed');
    expect(fileSize(db)).toBe(before);
    expect(walSizeBytes(db)).toBeGreaterThan(1500 * 4096);
    await addPages(db, 1, 'full');
    expect(fileSize(db)).toBeGreaterThan(before + 1500 * 4096);
  });

  it('relaxed commits checkpoint once the WAL passes its size limit', async () => {
    const db = await openTempDb({ journalSizeLimitBytes: 8 * 1024 * 1024 }); // 2,048 pages
    await addPages(db, 10, 'full');
    checkpoint(db, 'PASSIVE');
    const before = fileSize(db);
    for (let i = 0; i < 6; i++) await addPages(db, 250, 'relaxed');
    expect(fileSize(db)).toBe(before);
    for (let i = 0; i < 4; i++) await addPages(db, 250, 'relaxed');
    expect(fileSize(db)).toBeGreaterThan(before + 2000 * 4096);
    expect(db.sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(1000); // full commits checkpoint as before
  });
});
