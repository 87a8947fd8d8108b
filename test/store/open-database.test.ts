import { existsSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/store/migrations/index.ts';
import { openDatabase } from '../../src/store/open-database.ts';
import { StoreError } from '../../src/store/errors.ts';
import { onCleanup, tempDir } from './support.ts';

function pragma(db: BetterSqlite3.Database, name: string): unknown {
  return db.pragma(name, { simple: true });
}

async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  await expect(promise).rejects.toSatisfy((error) => error instanceof StoreError && error.code === code);
}

describe('openDatabase', () => {
  it('runs the migrations once: a second open changes nothing and keeps the database id', async () => {
    const path = join(tempDir(), 'state.db');
    const first = await openDatabase(path);
    const id = first.sqlite.prepare(`SELECT value FROM agent_meta WHERE key = 'database_id'`).pluck().get();
    await first.close();

    const second = await openDatabase(path);
    onCleanup(() => second.close());
    const migrations = second.sqlite.prepare('SELECT name FROM kysely_migration ORDER BY name').pluck().all();
    expect(migrations).toEqual(Object.keys(MIGRATIONS).sort()); // every registered one, each once
    expect(migrations.slice(0, 2)).toEqual(['0001_base', '0002_pull_outbox']);
    expect(second.sqlite.prepare(`SELECT value FROM agent_meta WHERE key = 'database_id'`).pluck().get()).toBe(id);
  });

  it('sets every pragma on every open, synchronous=FULL included after a reopen', async () => {
    const path = join(tempDir(), 'state.db');
    await (await openDatabase(path)).close();
    // A plain reopen of a WAL database gets synchronous=NORMAL (1): the agent must set FULL itself.
    const plain = new BetterSqlite3(path);
    expect(pragma(plain, 'synchronous')).toBe(1);
    plain.close();

    const db = await openDatabase(path, { busyTimeoutMs: 1234, journalSizeLimitBytes: 1 << 20 });
    onCleanup(() => db.close());
    expect(pragma(db.sqlite, 'journal_mode')).toBe('wal');
    expect(pragma(db.sqlite, 'synchronous')).toBe(2);
    expect(pragma(db.sqlite, 'busy_timeout')).toBe(1234);
    expect(pragma(db.sqlite, 'journal_size_limit')).toBe(1 << 20);
    expect(pragma(db.sqlite, 'foreign_keys')).toBe(1);
  });

  it('creates the file 0640 minus the umask, never world-readable, and the WAL files alike', async () => {
    const dir = tempDir();
    const old = process.umask(0o022);
    try {
      const db = await openDatabase(join(dir, 'a.db'));
      db.sqlite.exec(`INSERT INTO pull_state VALUES ('job', NULL, 't')`);
      expect(statSync(join(dir, 'a.db')).mode & 0o777).toBe(0o640);
      expect(statSync(join(dir, 'a.db-wal')).mode & 0o777).toBe(0o640);
      expect(statSync(join(dir, 'a.db-shm')).mode & 0o777).toBe(0o640);
      await db.close();
      process.umask(0o077);
      const strict = await openDatabase(join(dir, 'b.db'));
      expect(statSync(join(dir, 'b.db')).mode & 0o777).toBe(0o600);
      await strict.close();
    } finally {
      process.umask(old);
    }
  });

  it('removes world bits from an existing file and refuses a world-accessible fileMode', async () => {
    const dir = tempDir();
    const path = join(dir, 'old.db');
    writeFileSync(path, '');
    chmodSync(path, 0o644);
    const db = await openDatabase(path);
    onCleanup(() => db.close());
    expect(statSync(path).mode & 0o007).toBe(0);
    await expectCode(openDatabase(join(dir, 'c.db'), { fileMode: 0o644 }), 'INVALID_ARGUMENT');
    expect(existsSync(join(dir, 'c.db'))).toBe(false);
  });

  it('opens read-only without creating or migrating, and refuses writes', async () => {
    const dir = tempDir();
    await expectCode(openDatabase(join(dir, 'missing.db'), { readonly: true }), 'OPEN_FAILED');
    expect(existsSync(join(dir, 'missing.db'))).toBe(false);

    const foreign = join(dir, 'foreign.db');
    const other = new BetterSqlite3(foreign);
    other.pragma('journal_mode = WAL');
    other.exec('CREATE TABLE t (x)');
    other.close();
    await expectCode(openDatabase(foreign, { readonly: true }), 'NOT_INITIALIZED');

    const path = join(dir, 'state.db');
    await (await openDatabase(path)).close();
    const ro = await openDatabase(path, { readonly: true });
    onCleanup(() => ro.close());
    expect(pragma(ro.sqlite, 'synchronous')).toBe(2);
    expect(() => ro.write(() => 1)).toThrow(expect.objectContaining({ code: 'READ_ONLY' }) as Error);
  });

  it('refuses a database migrated by a newer agent', async () => {
    const path = join(tempDir(), 'state.db');
    const db = await openDatabase(path);
    db.sqlite.prepare(`INSERT INTO kysely_migration (name, timestamp) VALUES ('0099_future', 'x')`).run();
    await db.close();
    await expectCode(openDatabase(path), 'MIGRATION_FAILED');
  });

  it('refuses a write inside another open transaction on the same connection', async () => {
    const db = await openDatabase(join(tempDir(), 'state.db'));
    onCleanup(() => db.close());
    const nested = () => db.write(() => db.write(() => 1));
    expect(nested).toThrow(expect.objectContaining({ code: 'TRANSACTION_OPEN' }) as Error);
  });
});
