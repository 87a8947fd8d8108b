/**
 * Regression (issue 11, failure 10): after a 401, sending stayed paused for a whole `key_check_interval_ms` although
 * the key file already held the new key. At a 401 the daemon now reads the key file at once, before it pauses.
 * Dialect: default (the key rotation is the sandbox's control plane).
 */
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';
import { daemonHarnessPerTest } from '../support/daemon-harness.ts';
import { until } from '../support/test-logger.ts';

vi.setConfig({ testTimeout: 180_000 });

const openHarness = daemonHarnessPerTest();

it('goes on with the new key from the key file at once, though the next key check is ten minutes away', async () => {
  const h = await openHarness();
  const daemon = await h.startReady(
    [
      `api:\n  base_url: ${h.sandbox.url}\n  key_file: ${h.keyFile}\n`,
      'state:\n  dir: ./state\n',
      'http:\n  port: 0\n',
      'daemon:\n  key_check_interval_ms: 600000\n',
      'sources:\n  - name: tx\n    entity: transactions\n    path: ./inbox/tx\n    stable_ms: 200\n',
    ].join(''),
  );
  // The start-up jobs' requests end first: one of them in flight between the rotation and the rename below would get
  // the 401 before the key file holds the new key (then picked up seconds later: key-monitor.test.ts), not this case.
  await until(() => daemon.output().includes('approved prices pulled') && daemon.output().includes('approved prices reconciled'), 'the start-up pull and reconciliation', 60_000);
  // The platform user generates a new key and IT writes it to the key file before the agent's next request.
  const newKey = h.sandbox.control.rotateKey();
  // Written whole (a rename): the agent's 401 may come at any instant, and must find the new key already there. A
  // file caught half-written is picked up seconds later (test/daemon/key-monitor.test.ts).
  await writeFile(`${h.keyFile}.new`, `${newKey}\n`, { mode: 0o600 });
  await rename(`${h.keyFile}.new`, h.keyFile);
  await writeFile(join(h.inbox('tx'), 'after-rotation.csv'), 'transaction_id,item_id,transaction_timestamp\nT1,I1,2026-11-20T08:00:00Z\n');
  // Well before the ten-minute check (the deadline leaves room for a loaded machine, not for a pause).
  await h.report('tx', 'after-rotation.csv', 120_000);
  expect(h.sandbox.control.state().transactions.count).toBe(1);
  expect(h.sandbox.control.state().auth.rejected_total).toBeLessThanOrEqual(2);
  expect(daemon.output()).toContain('the key file holds a new one');
  expect(daemon.output()).not.toContain('sending is paused');
});
