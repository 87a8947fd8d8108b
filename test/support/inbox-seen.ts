import { rename, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { DEFAULT_RESCAN_INTERVAL_MS } from '../../src/ingest/watch/inbox-watcher.ts';
import type { ManualClock } from './manual-clock.ts';
import { until } from './test-logger.ts';

/**
 * Waits for an inbox watcher to see a file the test just wrote: through its change event, or, when chokidar lost
 * the event (it has, rarely, under load: a file written under the name of one just claimed), through the
 * watcher's periodic rescan, which the test's clock is then moved to. Either way is the agent's promise.
 */
export async function untilSeen(clock: ManualClock, seen: () => boolean, what: string): Promise<void> {
  try {
    await until(seen, what, 5_000);
    return;
  } catch {
    // No event reached the watcher: the rescan is what must find the file.
  }
  await clock.advance(DEFAULT_RESCAN_INTERVAL_MS);
  await until(seen, `${what} (at the inbox rescan)`, 60_000);
}

/**
 * Writes a file into an inbox whole (a hidden temporary name, then a rename), as an export should land. A plain
 * writeFile can be seen empty (the create event's stat, under load, before the write): its size then changes at the
 * stability check, which waits stable_ms more on a test clock nobody advances again.
 */
export async function writeWhole(path: string, content: string | Uint8Array): Promise<void> {
  const partial = join(dirname(path), `.${basename(path)}.partial`);
  await writeFile(partial, content);
  await rename(partial, path);
}
