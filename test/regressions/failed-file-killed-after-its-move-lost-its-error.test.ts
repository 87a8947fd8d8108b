/**
 * Regression (found by the chaos suite, seed 7): the agent records a file's outcome before it moves the file to
 * failed/ or held/, and closes the ledger row after the move. Only the status was recorded first, so a SIGKILL
 * between the move and the close left start-up to close the row without its error: a file set aside as CRASHED_AGENT
 * (its report said so) was listed as failed with no reason, which `files list --status failed` readers and the chaos
 * harness took for an ordinary failure; a held file was closed as failed and no longer held, so `files release` could
 * not find it. Now the error goes into the ledger with the outcome, and start-up closes the row with it; a duplicate
 * keeps the file it repeats the same way.
 *
 * The daemon dies exactly there: it SIGKILLs itself as it prepares the statement that closes the row
 * (test/support/kill-at-sql.ts), then a second daemon starts on the same state.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { daemonHarness, until, untilReady, type DaemonHarness } from '../support/daemon-harness.ts';
import { runCli } from '../support/run-cli.ts';

vi.setConfig({ testTimeout: 120_000 });

/** The statement that closes a finished file's ledger row (store/push-ledger.ts finishFile), and only it. */
const CLOSE_ROW = 'UPDATE push_files SET status = ?, final_path = ?, finished_at = ?';

let h: DaemonHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

interface Listed {
  id: number;
  name: string;
  status: string;
  error_code: string | null;
}

async function listed(harness: DaemonHarness, name: string): Promise<Listed | undefined> {
  const run = await runCli(['files', 'list', '--json', '--config', harness.configFile]);
  expect(run.code, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as Listed[]).find((f) => f.name === name);
}

/** Starts a daemon that dies as it closes the next file's row, drops `name`, and waits for the death. */
async function killedAfterTheMove(harness: DaemonHarness, source: string, name: string, content: string | Buffer): Promise<void> {
  const doomed = harness.start({ killAtSql: CLOSE_ROW });
  await untilReady(harness);
  await writeFile(join(harness.inbox(source), name), content);
  const end = await doomed.exited;
  expect(end.signal, doomed.output().slice(-2000)).toBe('SIGKILL');
}

/** Starts a daemon on the same state, waits until it has closed the row of `name`, and stops it. */
async function closedAtStart(harness: DaemonHarness, name: string): Promise<void> {
  const next = harness.start();
  await untilReady(harness);
  await until(async () => !['processing', undefined].includes((await listed(harness, name))?.status), `the start-up to close the row of ${name}`, 60_000);
  expect(await next.stop()).toBe(0);
}

it('a file killed between its move and the close of its ledger row keeps its error code, a held file stays held, a duplicate names its original', async () => {
  h = await daemonHarness();
  await h.writeConfig(
    [
      `api:\n  base_url: ${h.sandbox.url}\n  key_file: ./api-key\n`,
      'state:\n  dir: ./state\n',
      'http:\n  host: 127.0.0.1\n  port: 0\n',
      'sources:\n',
      '  - name: tx\n    entity: transactions\n    path: ./inbox/tx\n    stable_ms: 200\n',
      '  - name: stores\n    entity: product_store\n    path: ./inbox/stores\n    stable_ms: 200\n',
    ].join(''),
  );
  const [store] = h.sandbox.control.state().stores;
  const prices = (list: readonly string[]) => `item_id,store_id,current_price\n${list.map((p, i) => `K-${i},${store},${p}`).join('\n')}\n`;
  const sales = 'transaction_id,item_id,transaction_timestamp\nS-1,A,2026-11-20T08:00:00Z\n';
  const first = h.start();
  await untilReady(h);
  await writeFile(join(h.inbox('stores'), 'day1.csv'), prices(['1.00', '2.00', '3.00']));
  await writeFile(join(h.inbox('tx'), 'sales.csv'), sales);
  await h.report('stores', 'day1.csv');
  await h.report('tx', 'sales.csv');
  expect(await first.stop()).toBe(0);

  // The same content again is a duplicate of the first file; the daemon dies after moving it aside.
  await killedAfterTheMove(h, 'tx', 'sales-again.csv', sales);
  await closedAtStart(h, 'sales-again.csv');
  const again = await listed(h, 'sales-again.csv');
  expect(again).toMatchObject({ status: 'duplicate' });
  const shown = await runCli(['files', 'show', String(again?.id), '--json', '--config', h.configFile]);
  expect(shown.code, shown.stderr).toBe(0);
  expect((JSON.parse(shown.stdout) as { duplicate_of: { name: string } | null }).duplicate_of).toMatchObject({ name: 'sales.csv' });

  // A workbook in a CSV source fails as NOT_CSV; the daemon dies after moving it to failed/, and the next start
  // closes its row.
  await killedAfterTheMove(h, 'tx', 'till.csv', Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(64, 0x9d)]));
  await closedAtStart(h, 'till.csv');
  expect(await listed(h, 'till.csv')).toMatchObject({ status: 'failed', error_code: 'NOT_CSV' });

  // The brakes hold a price 100 times higher; the daemon dies after moving it to held/.
  await killedAfterTheMove(h, 'stores', 'day2.csv', prices(['1.00', '200', '3.00']));
  await closedAtStart(h, 'day2.csv');
  expect(await listed(h, 'day2.csv')).toMatchObject({ status: 'held', error_code: 'HELD' });
  expect(await h.stateValue('SELECT held_path FROM delta_files WHERE held_path IS NOT NULL')).toMatch(/held[/\\]day2\.csv$/);
});
