/**
 * Regression (found by the security tests): chokidar reports a file deleted and created again within 100 ms as a
 * "change" (its atomic-write handling), not as unlink + add. A file written under the same name right after the
 * agent claimed (renamed away) the previous one was therefore still taken for the file already handed over, and
 * never picked up. The watcher now compares inodes.
 */
import { mkdir, mkdtemp, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { InboxWatcher } from '../../src/ingest/watch/inbox-watcher.ts';
import { nameRules } from '../../src/ingest/watch/file-name-rules.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { captureLogger, until } from '../support/test-logger.ts';

let watcher: InboxWatcher | null = null;
afterEach(async () => {
  await watcher?.close();
});

it('a file written under the same name right after the claim of the previous one is handed over too', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'pa-same-name-'));
  await mkdir(join(dir, 'processing'));
  const ready: string[] = [];
  const file = join(dir, 'export.csv');
  watcher = new InboxWatcher({
    dir,
    rules: nameRules('*.csv', '.done'),
    stableMs: 1_000,
    poll: false,
    pollIntervalMs: 50,
    clock: new ManualClock(),
    logger: captureLogger().logger,
    onReady: (path) => ready.push(path),
  });
  await watcher.start();
  for (let n = 1; n <= 2; n += 1) {
    await writeFile(file, `a,b\n${n},2\n`);
    await writeFile(`${file}.done`, ''); // the producer marks each export complete
    await until(() => ready.length === n, `export ${n} to be handed over`);
    // The agent's claim renames it away; the producer writes the next export under the same name moments later.
    await rename(file, join(dir, 'processing', `${n}-export.csv`));
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
  expect(ready).toEqual([file, file]);
});
