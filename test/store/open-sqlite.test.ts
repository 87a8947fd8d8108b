import { existsSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { sqlColumn, sqlRun, sqlValue } from '../support/state-sql.ts';
import { StoreError } from '../../src/store/errors.ts';
import { sqlOf } from '../../src/store/sql-db.ts';
import { SQLITE_MIGRATIONS as MIGRATIONS } from '../../src/store/migration-list.ts';
import { openSqlite } from '../../src/store/sqlite/open-sqlite.ts';
import { SqliteDb } from '../../src/store/sqlite/sqlite-db.ts';
import { onCleanup, tempDir } from './support.ts';
import { bindReadOnly, mountsAvailable, unmount } from '../chaos/mounts.ts';

const canMount = mountsAvailable(join(tmpdir(), `pa-mount-probe-${process.pid}`));

function pragma(db: BetterSqlite3.Database | SqliteDb, name: string): unknown {
  return (db instanceof SqliteDb ? db.sqlite : db).pragma(name, { simple: true });
}

async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  await expect(promise).rejects.toSatisfy((error) => error instanceof StoreError && error.code === code);
}

describe('openSqlite', () => {
  it('runs the migrations once: a second open changes nothing and keeps the database id', async () => {
    const path = join(tempDir(), 'state.db');
    const first = await openSqlite(path);
    const id = await sqlValue(first, `SELECT value FROM agent_meta WHERE key = 'database_id'`);
    await first.close();

    const second = await openSqlite(path);
    onCleanup(() => second.close());
    const migrations = await sqlColumn(second, 'SELECT name FROM kysely_migration ORDER BY name');
    expect(migrations).toEqual(Object.keys(MIGRATIONS).sort()); // every registered one, each once
    expect(migrations.slice(0, 2)).toEqual(['0001_base', '0002_pull_outbox']);
    expect(await sqlValue(second, `SELECT value FROM agent_meta WHERE key = 'database_id'`)).toBe(id);
  });

  it('sets every pragma on every open, synchronous=FULL included after a reopen', async () => {
    const path = join(tempDir(), 'state.db');
    await (await openSqlite(path)).close();
    // A plain reopen of a WAL database gets synchronous=NORMAL (1): the agent must set FULL itself.
    const plain = new BetterSqlite3(path);
    expect(pragma(plain, 'synchronous')).toBe(1);
    plain.close();

    const db = await openSqlite(path, { busyTimeoutMs: 1234, journalSizeLimitBytes: 1 << 20 });
    onCleanup(() => db.close());
    expect(pragma(db, 'journal_mode')).toBe('wal');
    expect(pragma(db, 'synchronous')).toBe(2);
    expect(pragma(db, 'busy_timeout')).toBe(1234);
    expect(pragma(db, 'journal_size_limit')).toBe(1 << 20);
    expect(pragma(db, 'foreign_keys')).toBe(1);
  });

  it('creates the file 0640 minus the umask, never world-readable, and the WAL files alike', async () => {
    const dir = tempDir();
    const old = process.umask(0o022);
    try {
      const db = await openSqlite(join(dir, 'a.db'));
      await sqlRun(db, `INSERT INTO pull_state VALUES ('job', NULL, 't')`);
      expect(statSync(join(dir, 'a.db')).mode & 0o777).toBe(0o640);
      expect(statSync(join(dir, 'a.db-wal')).mode & 0o777).toBe(0o640);
      expect(statSync(join(dir, 'a.db-shm')).mode & 0o777).toBe(0o640);
      await db.close();
      process.umask(0o077);
      const strict = await openSqlite(join(dir, 'b.db'));
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
    const db = await openSqlite(path);
    onCleanup(() => db.close());
    expect(statSync(path).mode & 0o007).toBe(0);
    await expectCode(openSqlite(join(dir, 'c.db'), { fileMode: 0o644 }), 'INVALID_ARGUMENT');
    expect(existsSync(join(dir, 'c.db'))).toBe(false);
  });

  it('opens read-only without creating or migrating, and refuses writes', async () => {
    const dir = tempDir();
    await expectCode(openSqlite(join(dir, 'missing.db'), { readonly: true }), 'MISSING');
    expect(existsSync(join(dir, 'missing.db'))).toBe(false);

    const foreign = join(dir, 'foreign.db');
    const other = new BetterSqlite3(foreign);
    other.pragma('journal_mode = WAL');
    other.exec('CREATE TABLE t (x)');
    other.close();
    await expectCode(openSqlite(foreign, { readonly: true }), 'NOT_INITIALIZED');

    const path = join(dir, 'state.db');
    await (await openSqlite(path)).close();
    const ro = await openSqlite(path, { readonly: true });
    onCleanup(() => ro.close());
    expect(pragma(ro, 'synchronous')).toBe(2);
    await expect(sqlOf(ro).write(() => Promise.resolve(1))).rejects.toThrow(expect.objectContaining({ code: 'READ_ONLY' }) as Error);
  });

  it('a state.dir that cannot be a folder (a file in the way) is one sentence naming the setting', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'afile'), '');
    for (const [stateDir, code] of [[join(dir, 'afile'), 'EEXIST'], [join(dir, 'afile', 'state'), 'ENOTDIR']] as const) {
      await expect(openSqlite(join(stateDir, 'pricing-agent.db'))).rejects.toThrow(
        expect.objectContaining({ code: 'OPEN_FAILED', message: `state.dir ${stateDir} cannot be used (${code}): a file is in the way: set state.dir to a folder` }) as Error,
      );
    }
  });

  it.skipIf(!canMount)('a database this user may not write: one sentence saying whose command it is, not SQLite\'s "readonly database"', async () => {
    // As root only a read-only mount refuses a write (root passes every mode check): the same check, EROFS.
    const dir = tempDir();
    const path = join(dir, 'state', 'pricing-agent.db');
    await (await openSqlite(path)).close();
    bindReadOnly(join(dir, 'state'));
    try {
      await expect(openSqlite(path)).rejects.toThrow(
        expect.objectContaining({ code: 'OPEN_FAILED', message: `cannot write the state database ${path} (EROFS): run the command as the agent's user (sudo -u pricing-agent ...)` }) as Error,
      );
    } finally {
      unmount(join(dir, 'state'));
    }
  });

  it('refuses a database migrated by a newer agent', async () => {
    const path = join(tempDir(), 'state.db');
    const db = await openSqlite(path);
    await sqlRun(db, `INSERT INTO kysely_migration (name, timestamp) VALUES ('0099_future', 'x')`);
    await db.close();
    await expectCode(openSqlite(path), 'STATE_TOO_NEW');
  });

  it('refuses a call on the database from inside one of its transactions, instead of waiting for itself', async () => {
    const db = sqlOf(await openSqlite(join(tempDir(), 'state.db')));
    onCleanup(() => db.close());
    const open = expect.objectContaining({ code: 'TRANSACTION_OPEN' }) as Error;
    await expect(db.write(() => db.write(() => Promise.resolve(1)))).rejects.toThrow(open);
    await expect(db.write(() => db.value('SELECT 1'))).rejects.toThrow(open);
    expect(await db.value('SELECT count(*) FROM pull_state')).toBe(0); // nothing stuck: the connection is free
  });

  it('runs the transactions of one handle one after another; a read waits for the transaction in flight', async () => {
    const db = sqlOf(await openSqlite(join(tempDir(), 'state.db')));
    onCleanup(() => db.close());
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = db.write(async (tx) => {
      await tx.run(`INSERT INTO pull_state VALUES ('a', NULL, 't')`);
      await gate; // something else runs meanwhile
      await tx.run(`INSERT INTO pull_state VALUES ('b', NULL, 't')`);
    });
    const read = db.value<number>('SELECT count(*) FROM pull_state');
    const second = db.write((tx) => tx.value<number>('SELECT count(*) FROM pull_state'));
    release();
    await first;
    expect(await read).toBe(2); // never the half-done transaction's one row
    expect(await second).toBe(2);
    const failed = db.write(async (tx) => {
      await tx.run(`INSERT INTO pull_state VALUES ('c', NULL, 't')`);
      throw new Error('boom');
    });
    await expect(failed).rejects.toThrow('boom');
    expect(await db.value('SELECT count(*) FROM pull_state')).toBe(2); // rolled back
  });
});
