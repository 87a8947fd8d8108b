import { describe, expect, it } from 'vitest';
import { openReadOnlySqlite } from '../../src/store/sqlite/read-only-scan.ts';
import { onCleanup, openTempSqlite } from './support.ts';

describe('openReadOnlySqlite (delta push reads the remembered keys on another thread)', () => {
  it('reads one snapshot until closed, with a page cache of 1 MiB instead of the 16 MB every connection gets', async () => {
    const db = await openTempSqlite();
    await db.write((tx) => tx.insert({ table: 'pull_state', columns: ['job', 'cursor', 'updated_at'] }, [['a', 'c1', 'now']]));
    const reader = openReadOnlySqlite(db.path);
    let open = true;
    onCleanup(() => {
      if (open) reader.close();
    });
    // A scan reads each leaf page once: a larger cache only made the process's memory grow with the number of keys
    // (docs/performance.md, "Memory flat in the number of keys").
    expect(reader.raw<[number]>('PRAGMA cache_size', [])).toEqual([[-1024]]);
    expect(db.sqlite.pragma('cache_size', { simple: true })).toBe(-16000);

    // Its snapshot is taken at its first read (a deferred BEGIN), as a scan's first page does.
    expect(reader.raw<[string]>('SELECT job FROM pull_state ORDER BY job', [])).toEqual([['a']]);
    await db.write((tx) => tx.insert({ table: 'pull_state', columns: ['job', 'cursor', 'updated_at'] }, [['b', 'c2', 'now']]));
    expect(reader.raw<[string]>('SELECT job FROM pull_state ORDER BY job', [])).toEqual([['a']]);
    reader.close();
    open = false;
    const again = openReadOnlySqlite(db.path);
    try {
      expect(again.raw<[string]>('SELECT job FROM pull_state ORDER BY job', [])).toEqual([['a'], ['b']]);
    } finally {
      again.close();
    }
  });
});
