/**
 * Agents started together on a new SQLite state (a daemon and a one-shot command, two commands of a script): each
 * process opens and migrates the same file at once. One migrates it and the others wait for its write lock and find
 * it migrated; none fails with "database is locked" (found when two commands created one state at the same moment).
 * Real processes: the lock is SQLite's, between connections of different processes.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SQLITE_MIGRATIONS } from '../../src/store/migration-list.ts';
import { openSqlite } from '../../src/store/sqlite/open-sqlite.ts';
import { tempDir } from './support.ts';

const OPEN_SQLITE = fileURLToPath(new URL('../../src/store/sqlite/open-sqlite.ts', import.meta.url));
const PROCESSES = 6;
const ROUNDS = 3;

function openInChild(path: string): Promise<{ code: number; stderr: string }> {
  const code = `const { openSqlite } = await import(${JSON.stringify(OPEN_SQLITE)}); await (await openSqlite(${JSON.stringify(path)})).close();`;
  return new Promise((resolve) => {
    execFile(process.execPath, ['--input-type=module', '-e', code], { timeout: 60_000 }, (error, _stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stderr });
    });
  });
}

describe('opening a new SQLite state from several processes at once', () => {
  it('migrates it once; every process opens it', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const path = join(tempDir(), 'pricing-agent.db');
      const runs = await Promise.all(Array.from({ length: PROCESSES }, () => openInChild(path)));
      expect(runs.map((r) => r.code), runs.map((r) => r.stderr).join('\n')).toEqual(Array.from({ length: PROCESSES }, () => 0));
      const db = await openSqlite(path, { readonly: true });
      try {
        const applied = await db.all<{ name: string }>('SELECT name FROM kysely_migration ORDER BY name');
        expect(applied.map((r) => r.name)).toEqual(Object.keys(SQLITE_MIGRATIONS).sort());
      } finally {
        await db.close();
      }
    }
  }, 120_000);
});
