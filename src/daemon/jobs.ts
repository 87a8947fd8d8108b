/**
 * The scheduled jobs of a config: what `run` schedules besides the inbox watchers. Each job is resumable at every
 * step (its progress lives in the state database), so a run cut short by a drain or a crash continues next time.
 * Every job waits for a working key before it sends anything.
 *
 *   approved_prices            pull.approved_prices.schedule: deliveries -> outbox -> acknowledge -> store files
 *   approved_prices_reconcile  pull.approved_prices.reconcile.schedule: history read for late cancellations
 *   mirror:<stream>            pull.mirrors[].schedule: incremental listing into the mirror table
 */
import type { ApiClient } from '../api/client.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/index.ts';
import type { Logger } from '../log.ts';
import { approvedPricesOptions, reconcileOptions, runApprovedPricesPull, runApprovedPricesReconciliation, runMirror } from '../pull/index.ts';
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

export function scheduledJobs(config: Config, ctx: JobContext): ScheduledJob[] {
  const deps = { db: ctx.db, client: ctx.client, clock: ctx.clock, logger: ctx.logger };
  const pullDeps = {
    ...deps,
    onVersionsStored: (versions: readonly { approved_at: string }[], committedAtMs: number) => {
      for (const v of versions) ctx.metrics.approvalToOutbox.observe(Math.max(0, (committedAtMs - Date.parse(v.approved_at)) / 1000));
    },
  };
  const section = config.pull.approved_prices;
  const jobs: ScheduledJob[] = [
    {
      name: 'approved_prices',
      schedule: section.schedule,
      run: async (signal) => {
        await ctx.waitForKey(signal);
        const summary = await runApprovedPricesPull(pullDeps, signal, approvedPricesOptions(config));
        ctx.metrics.approvalsStored.inc(summary.deliveries.inserted);
        ctx.metrics.approvalsAcknowledged.inc(summary.acks.acknowledged);
      },
    },
    {
      name: 'approved_prices_reconcile',
      schedule: section.reconcile.schedule,
      run: async (signal) => {
        await ctx.waitForKey(signal);
        await runApprovedPricesReconciliation(deps, signal, reconcileOptions(config));
      },
    },
  ];
  for (const mirror of config.pull.mirrors) {
    jobs.push({
      name: `mirror:${mirror.stream}`,
      schedule: mirror.schedule,
      run: async (signal) => {
        await ctx.waitForKey(signal);
        await runMirror(deps, mirror, signal);
      },
    });
  }
  return jobs;
}
