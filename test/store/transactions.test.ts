/**
 * The transaction rule of src/store/sql-db.ts on each backend, for statements issued without awaiting each other
 * (pipelined on PostgreSQL): they run in the order issued, a failed one rolls the whole transaction back, and
 * commitBehind commits what was issued, or nothing when one of those statements failed.
 */
import { describe, expect, it } from 'vitest';
import { sqlOf } from '../../src/store/sql-db.ts';
import { sqlRows } from '../support/state-sql.ts';
import { openTempDb } from './support.ts';

const NOW = '2026-11-24T10:00:00Z';

async function cursors(db: Parameters<typeof sqlOf>[0]): Promise<unknown[]> {
  return sqlRows(db, 'SELECT job, cursor FROM pull_state ORDER BY job');
}

describe('statements issued together in one transaction', () => {
  it('run in the order issued and commit together', async () => {
    const db = await openTempDb();
    const upsert = `INSERT INTO pull_state (job, cursor, updated_at) VALUES (?, ?, ?)
      ON CONFLICT (job) DO UPDATE SET cursor = excluded.cursor`;
    const answers = await sqlOf(db).write((tx) =>
      Promise.all([
        tx.run(upsert, ['a', 'c-1', NOW]),
        tx.run(upsert, ['a', 'c-2', NOW]),
        tx.value<string>(`SELECT cursor FROM pull_state WHERE job = 'a'`),
        tx.commitBehind(Promise.all([tx.run(upsert, ['b', 'c-9', NOW]), tx.value<number>('SELECT count(*) FROM pull_state')])),
      ]),
    );
    expect(answers).toEqual([1, 1, 'c-2', [1, 2]]);
    expect(await cursors(db)).toEqual([
      { job: 'a', cursor: 'c-2' },
      { job: 'b', cursor: 'c-9' },
    ]);
  });

  it('a failed statement among them rolls back every one, also behind commitBehind', async () => {
    const db = await openTempDb();
    const insert = 'INSERT INTO pull_state (job, cursor, updated_at) VALUES (?, ?, ?)';
    await expect(
      sqlOf(db).write((tx) => Promise.all([tx.run(insert, ['a', 'c-1', NOW]), tx.run(insert, ['a', 'c-2', NOW]), tx.run(insert, ['b', 'c-3', NOW])])),
    ).rejects.toThrow(/UNIQUE|unique|duplicate/);
    expect(await cursors(db)).toEqual([]);

    await expect(
      sqlOf(db).write(async (tx) => {
        await tx.run(insert, ['a', 'c-1', NOW]);
        return tx.commitBehind(Promise.all([tx.run(insert, ['b', 'c-2', NOW]), tx.run(insert, ['b', 'c-3', NOW])]));
      }),
    ).rejects.toThrow(/UNIQUE|unique|duplicate/);
    expect(await cursors(db)).toEqual([]);
    // The handle goes on: the next transaction commits.
    await sqlOf(db).write((tx) => tx.commitBehind(tx.run(insert, ['c', 'c-4', NOW])));
    expect(await cursors(db)).toEqual([{ job: 'c', cursor: 'c-4' }]);
  });
});
