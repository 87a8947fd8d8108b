/**
 * The scheduled jobs of a config: what `run` schedules besides the inbox watchers. Each job is resumable at every
 * step (its progress lives in the state database), so a run cut short by a drain or a crash continues next time.
 */
import type { ApiClient } from '../api/client.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/index.ts';
import type { Logger } from '../log.ts';
import type { StateDb } from '../store/state-db.ts';
import type { AgentMetrics } from './metrics.ts';
import type { ScheduledJob } from './scheduler.ts';

export interface JobContext {
  readonly db: StateDb;
  readonly client: ApiClient;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: AgentMetrics;
  /** Resolves when the API key works (held while a 401 is unresolved). */
  readonly waitForKey: (signal: AbortSignal) => Promise<void>;
}

export function scheduledJobs(_config: Config, _ctx: JobContext): ScheduledJob[] {
  return [];
}
