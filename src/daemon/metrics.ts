/**
 * The agent's Prometheus metrics. Names follow the conventions (snake_case, `_total` counters, base units: seconds,
 * bytes). Labels are bounded sets only: source names, entities, operations, statuses, job and stream names, POS
 * consumer names — never a file name or an id. Gauges that describe the database are read when scraped.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { AGENT_VERSION } from '../version.ts';

export interface MetricsSources {
  /** Rows in the price feed, the lag of each POS consumer. */
  outbox(): Promise<{ feedRows: number; consumers: { name: string; lag: number }[] }>;
  /** Age of each mirror stream's watermark in seconds (null: never completed). */
  mirrors(): { stream: string; watermarkAgeSeconds: number | null }[];
  ready(): boolean;
}

export class AgentMetrics {
  readonly registry = new Registry();
  readonly files = new Counter({ name: 'pricing_agent_files_total', help: 'Files pushed, by source and outcome (done, failed, duplicate, deferred, refused).', labelNames: ['source', 'outcome'], registers: [this.registry] });
  readonly rows = new Counter({ name: 'pricing_agent_rows_total', help: 'Rows of pushed files, by entity and result (accepted, rejected, superseded).', labelNames: ['entity', 'result'], registers: [this.registry] });
  readonly apiRequests = new Counter({ name: 'pricing_agent_api_requests_total', help: 'API responses, by operation and HTTP status.', labelNames: ['operation', 'status'], registers: [this.registry] });
  readonly apiRetries = new Counter({ name: 'pricing_agent_api_retries_total', help: 'API requests retried after a 5xx or a transport error, by operation.', labelNames: ['operation'], registers: [this.registry] });
  readonly rateLimitWaits = new Counter({ name: 'pricing_agent_rate_limit_waits_total', help: 'Requests that waited for a Retry-After after a 429.', registers: [this.registry] });
  readonly rateLimitWaitSeconds = new Counter({ name: 'pricing_agent_rate_limit_wait_seconds_total', help: 'Time spent waiting for Retry-After windows.', registers: [this.registry] });
  readonly importJobs = new Counter({ name: 'pricing_agent_import_jobs_total', help: 'Import jobs that ended, by state (completed, failed).', labelNames: ['state'], registers: [this.registry] });
  readonly approvalsStored = new Counter({ name: 'pricing_agent_approvals_stored_total', help: 'Approved price versions stored in the outbox.', registers: [this.registry] });
  readonly approvalsAcknowledged = new Counter({ name: 'pricing_agent_approvals_acknowledged_total', help: 'Approved prices acknowledged to the platform.', registers: [this.registry] });
  readonly jobRuns = new Counter({ name: 'pricing_agent_job_runs_total', help: 'Scheduled job runs, by job and outcome.', labelNames: ['job', 'outcome'], registers: [this.registry] });
  readonly jobLastSuccess = new Gauge({ name: 'pricing_agent_job_last_success_timestamp_seconds', help: 'Unix time of the last successful run of each scheduled job.', labelNames: ['job'], registers: [this.registry] });
  readonly keyRejected = new Gauge({ name: 'pricing_agent_api_key_rejected', help: '1 while the API rejects the key (401), else 0.', registers: [this.registry] });

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'pricing_agent_' });
    // prom-client names these gauges *_total, which Prometheus reserves for counters (promtool check metrics says so).
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
      this.registry.removeSingleMetric(`pricing_agent_${name}`);
    }
    new Gauge({ name: 'pricing_agent_info', help: 'The agent version (value 1).', labelNames: ['version'], registers }).set({ version: AGENT_VERSION }, 1);
    new Gauge({
      name: 'pricing_agent_ready',
      help: '1 when /readyz would answer 200.',
      registers,
      collect() {
        this.set(sources.ready() ? 1 : 0);
      },
    });
    // Each gauge reads what it shows in its own collect: prom-client renders them in registration order, so a
    // gauge filled by another one's collect would show the previous scrape's values (or none).
    new Gauge({
      name: 'pricing_agent_outbox_feed_rows',
      help: 'Rows in the price feed (the highest seq).',
      registers,
      async collect() {
        this.set((await sources.outbox()).feedRows);
      },
    });
    new Gauge({
      name: 'pricing_agent_outbox_consumer_lag',
      help: 'Feed rows a POS consumer has not yet read.',
      labelNames: ['consumer'],
      registers,
      async collect() {
        const { consumers } = await sources.outbox();
        this.reset();
        for (const c of consumers) this.set({ consumer: c.name }, c.lag);
      },
    });
    new Gauge({
      name: 'pricing_agent_mirror_watermark_age_seconds',
      help: 'Age of each mirror stream watermark (how far behind the mirror may be).',
      labelNames: ['stream'],
      registers,
      collect() {
        this.reset();
        for (const m of sources.mirrors()) if (m.watermarkAgeSeconds !== null) this.set({ stream: m.stream }, m.watermarkAgeSeconds);
      },
    });
  }
}
