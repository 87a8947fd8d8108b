/**
 * What every pull needs from its caller (the daemon's scheduler or a one-shot CLI command): the state database,
 * the API client, the clock and the logger. Nothing in src/pull reads the config file: the caller passes the
 * section values it loaded.
 */
import type { ApiClient } from '../api/client.ts';
import type { ApprovedPrice } from '../api/schemas/index.ts';
import type { Clock } from '../clock.ts';
import type { Logger } from '../log.ts';
import type { StateDb } from '../store/state-db.ts';

export interface PullDeps {
  readonly db: StateDb;
  readonly client: ApiClient;
  readonly clock: Clock;
  readonly logger: Logger;
  /** After a deliveries page committed: the versions it stored for the first time, and when (metrics). */
  readonly onVersionsStored?: (versions: readonly ApprovedPrice[], committedAtMs: number) => void;
}

/** Throws the signal's reason when the caller asked the run to stop (SIGTERM drain, a CLI Ctrl-C). */
export function checkAborted(signal: AbortSignal | undefined): void {
  signal?.throwIfAborted();
}
