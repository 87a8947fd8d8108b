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
