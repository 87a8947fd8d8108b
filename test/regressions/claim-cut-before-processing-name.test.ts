/**
 * Regression (found by the chaos suite): a SIGKILL between the claim's ledger row and the recording of its
 * processing name left a 'claiming' row with an empty processing path. The next start closed that row as
 * FILE_VANISHED with a failed report, although the file was still in the inbox, and the watcher then claimed the
 * same file again: one drop, two reports, one of them a false failure. Now the row completes its own claim.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { processClaimed } from '../../src/ingest/file/push-file.ts';
import { getFile, unfinishedFiles } from '../../src/store/push-ledger.ts';
import { crashedClaim } from '../support/crashed-claim.ts';
import { openForFile } from '../support/open-for-file.ts';
import { pushHarness } from '../support/push-harness.ts';

const h = openForFile(() => pushHarness());

it('a claim cut short before its processing name was recorded claims the file still in the inbox', async () => {
  const source = await h.source('transactions');
  await writeFile(join(source.inbox, 'early.csv'), 'transaction_id,item_id,transaction_timestamp\nCUT-1,A,2026-11-20T08:00:00Z\n');
  const id = await crashedClaim(h.db, source, 'early.csv', false);
  const result = await processClaimed(h.deps, source, id);
  expect(result.outcome).toBe('done');
  expect(await getFile(h.db, id)).toMatchObject({ status: 'done', rows_accepted: 1 });
  expect(existsSync(join(source.inbox, 'early.csv')), 'moved out of the inbox').toBe(false);
  expect(existsSync(join(source.inbox, 'failed')), 'no failed report').toBe(false);
  expect(await unfinishedFiles(h.db, source.name)).toEqual([]);
  expect(h.sandbox.control.state({ keys: true }).transactions.keys).toEqual(['CUT-1']);
});
