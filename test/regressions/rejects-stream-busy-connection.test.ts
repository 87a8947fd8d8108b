/**
 * Regression (found by the chaos suite): the rejects CSV was streamed to disk from an open SQLite iterator, and
 * while it was open every other statement on the daemon's one connection (the pull, another source's batch
 * checkpoint) failed with "This database connection is busy executing a query". Now the rejects are read in pages.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { pushFile } from '../../src/ingest/file/push-file.ts';
import { getFile } from '../../src/store/push-ledger.ts';
import { openForFile } from '../support/open-for-file.ts';
import { pushHarness } from '../support/push-harness.ts';
import { sqlRun, sqlValue } from '../support/state-sql.ts';

const h = openForFile(() => pushHarness());

it('other statements run while a large rejects file is written', async () => {
  const source = await h.source('transactions');
  // One valid row first: a file whose rows are all rejected stops after its first 1,000 (row-fate.ts).
  const lines = ['transaction_id,item_id,transaction_timestamp', 'RJ-ok,A,2026-11-20T08:00:00Z'];
  for (let i = 0; i < 20_000; i += 1) lines.push(`RJ-${i},A,not-a-date`);
  await writeFile(join(source.inbox, 'rejects.csv'), `${lines.join('\n')}\n`);
  let running = true;
  let statements = 0;
  const errors: string[] = [];
  // Another user of the connection, as the pull or a second source would be, while the report is written.
  const other = (async () => {
    while (running) {
      try {
        await sqlRun(h.db, `UPDATE push_files SET attempts = attempts WHERE id = 0`);
        await sqlValue(h.db, 'SELECT count(*) FROM push_files');
        statements += 1;
      } catch (error) {
        errors.push(String(error));
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  const result = await pushFile(h.deps, source, join(source.inbox, 'rejects.csv'));
  running = false;
  await other;
  expect(result.outcome).toBe('done');
  expect((await getFile(h.db, (result as { file: { id: number } }).file.id))?.rows_rejected).toBe(20_000);
  expect(statements).toBeGreaterThan(0);
  expect(errors).toEqual([]);
});
