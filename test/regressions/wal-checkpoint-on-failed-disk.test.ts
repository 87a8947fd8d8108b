/**
 * Regression (found by the resource-fault tests): the WAL maintenance timer called a checkpoint that throws "disk
 * I/O error" once the state disk turned read-only, inside setInterval: an uncaught exception that crashed the
 * daemon a minute into the problem it was reporting in /readyz. Now a failed tick is reported and retried.
 */
import { join } from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { afterAll, expect, it } from 'vitest';
import { openSqlite } from '../../src/store/sqlite/open-sqlite.ts';
import { WalMaintenance } from '../../src/store/sqlite/wal-maintenance.ts';
import { failExt4, mountExt4, mountsAvailable, unmount } from '../chaos/mounts.ts';
import { until } from '../support/test-logger.ts';

const canMount = mountsAvailable(join(tmpdir(), `pa-mount-probe-${process.pid}`));
let dir = '';
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

it.skipIf(!canMount)('a checkpoint failing on a read-only disk is reported, not thrown from the timer', async () => {
  dir = await mkdtemp(join(tmpdir(), 'pa-wal-ro-'));
  const mount = join(dir, 'state');
  mountExt4(join(dir, 'state.img'), mount, 16);
  try {
    const db = await openSqlite(join(mount, 'pricing-agent.db'));
    db.sqlite.prepare("INSERT INTO consumer_offsets (consumer, last_seq, updated_at) VALUES ('pos', 0, 'now')").run();
    failExt4(mount);
    const errors: unknown[] = [];
    let checkpoints = 0;
    const wal = new WalMaintenance(db, { intervalMs: 20, onError: (e) => errors.push(e), onCheckpoint: () => (checkpoints += 1) }).start();
    // The timer goes on after a failed tick: another tick runs (it fails again, or finds nothing left to write).
    await until(() => errors.length >= 1 && errors.length + checkpoints >= 2, 'a failed tick and another after it').catch((error: unknown) => {
      throw new Error(`${String(error)}: ${errors.length} ticks failed, ${checkpoints} checkpointed`);
    });
    wal.stop();
    expect(String(errors[0])).toMatch(/disk I\/O error/);
    await db.close().catch(() => undefined); // closing checkpoints too: it fails the same way
  } finally {
    unmount(mount);
  }
});
