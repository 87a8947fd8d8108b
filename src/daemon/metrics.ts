/**
 * The agent's Prometheus metrics. Names follow the conventions (snake_case, `_total` counters, base units: seconds,
 * bytes). Labels are bounded sets only: source names, entities, operations, statuses, job and stream names, POS
 * consumer names (configured) — never a file name, a store or an id. Gauges that describe the database are read
 * when scraped.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { FeedOverview } from '../feed/consumer-status.ts';
import { AGENT_VERSION } from '../version.ts';

export interface MetricsSources {
  /** Rows in the price feed, the lag of each POS consumer. */
  outbox(): Promise<{ feedRows: number; consumers: { name: string; lag: number }[] }>;
  /** Age of each mirror stream's watermark in seconds (null: never completed). */
  mirrors(): Promise<{ stream: string; watermarkAgeSeconds: number | null }[]>;
  ready(): boolean;
  /** The feed's consumers (src/feed/consumer-status.ts); absent or null when no feed consumer is configured. */
  feed?(): Promise<FeedOverview | null>;
  /** Files the brakes hold, per source (delta push). */
  heldFiles?(): Promise<{ source: string; count: number }[]>;
}

export class AgentMetrics {
  readonly registry = new Registry();
  readonly files = new Counter({ name: 'pricing_agent_files_total', help: 'Files pushed, by source and outcome (done, failed, duplicate, deferred, refused, held).', labelNames: ['source', 'outcome'], registers: [this.registry] });
  readonly rows = new Counter({ name: 'pricing_agent_rows_total', help: 'Rows of pushed files, by entity and result (accepted, rejected, superseded, merged, unchanged, skipped).', labelNames: ['entity', 'result'], registers: [this.registry] });
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
  /** No sample without ha.enabled. */
  readonly haRole = new Gauge({ name: 'pricing_agent_ha_role', help: 'HA: 1 for this node\'s role (active or standby), 0 for the other.', labelNames: ['role'], registers: [this.registry] });
  // Seconds from the platform's approved_at to the commit of the version in the outbox: the pull schedule plus the pull.
  readonly approvalToOutbox = new Histogram({ name: 'pricing_agent_approval_to_outbox_seconds', help: 'Time from approval on the platform (approved_at) to the commit in the outbox, per version stored.', buckets: [5, 15, 30, 60, 90, 120, 300, 600, 1800, 3600, 7200, 21600, 86400], registers: [this.registry] });
  readonly feedRequests = new Counter({ name: 'pricing_agent_feed_requests_total', help: 'Feed API requests answered, by consumer.', labelNames: ['consumer'], registers: [this.registry] });
  readonly feedRowsServed = new Counter({ name: 'pricing_agent_feed_rows_served_total', help: 'Feed rows handed to each consumer by /feed/v1/changes.', labelNames: ['consumer'], registers: [this.registry] });
  readonly feedRateLimited = new Counter({ name: 'pricing_agent_feed_rate_limited_total', help: 'Feed API requests refused with 429 (rate limit), by consumer.', labelNames: ['consumer'], registers: [this.registry] });
  readonly feedUnauthorized = new Counter({ name: 'pricing_agent_feed_unauthorized_requests_total', help: 'Feed API requests without a valid token (401, or 429 for an address that keeps sending them).', registers: [this.registry] });
  readonly feedConnections = new Gauge({ name: 'pricing_agent_feed_connections', help: 'Open connections to the feed listener.', registers: [this.registry] });
  readonly feedWaiting = new Gauge({ name: 'pricing_agent_feed_waiting_requests', help: 'Long-polls of the feed waiting for a row.', registers: [this.registry] });

  /** HA: this node's role (without ha.enabled the metric has no sample). */
  setHaRole(role: 'active' | 'standby'): void {
    this.haRole.set({ role: 'active' }, role === 'active' ? 1 : 0);
    this.haRole.set({ role: 'standby' }, role === 'standby' ? 1 : 0);
  }

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
    // Per feed consumer (labels: configured names only; a store is never a label): aggregates over its stores.
    const perConsumer = (name: string, help: string, value: (c: FeedOverview['consumers'][number], o: FeedOverview) => number | null) =>
      new Gauge({
        name,
        help,
        labelNames: ['consumer'],
        registers,
        async collect() {
          const overview = (await sources.feed?.()) ?? null;
          this.reset();
          for (const c of overview?.consumers ?? []) {
            const v = value(c, overview as FeedOverview);
            if (v !== null) this.set({ consumer: c.name }, v);
          }
        },
      });
    perConsumer('pricing_agent_feed_offset', 'The committed offset (seq) of each feed consumer.', (c) => c.offset);
    perConsumer('pricing_agent_feed_last_seen_timestamp_seconds', 'Unix time of the last request of each feed consumer with a valid token.', (c) =>
      c.last_seen === null ? null : Date.parse(c.last_seen) / 1000,
    );
    perConsumer('pricing_agent_feed_applied_seq', 'The lowest seq applied over the stores of each feed consumer (0: a store never confirmed).', (c) =>
      c.stores.length === 0 ? null : Math.min(...c.stores.map((s) => s.applied_seq ?? 0)),
    );
    perConsumer('pricing_agent_feed_apply_lag_rows', 'Feed rows not yet confirmed as applied, summed over the stores of each consumer.', (c) =>
      c.stores.reduce((sum, s) => sum + s.lag_rows, 0),
    );
    perConsumer('pricing_agent_feed_apply_lag_seconds', 'Age of the oldest feed row not yet applied at any store of each consumer.', (c) =>
      Math.max(0, ...c.stores.map((s) => s.lag_seconds)),
    );
    const overdueRows = new WeakMap<FeedOverview, Map<string, number>>();
    perConsumer('pricing_agent_feed_apply_overdue_rows', 'Prices due and not applied within feed.apply_deadline, summed over the stores of each consumer.', (c, o) => {
      let byConsumer = overdueRows.get(o);
      if (!byConsumer) {
        byConsumer = new Map();
        for (const d of o.overdue) byConsumer.set(d.consumer, (byConsumer.get(d.consumer) ?? 0) + d.rows);
        overdueRows.set(o, byConsumer);
      }
      return byConsumer.get(c.name) ?? 0;
    });
    new Gauge({
      name: 'pricing_agent_held_files',
      help: 'Files the brakes hold in held/, waiting for files release, by source.',
      labelNames: ['source'],
      registers,
      async collect() {
        const held = (await sources.heldFiles?.()) ?? [];
        this.reset();
        for (const h of held) this.set({ source: h.source }, h.count);
      },
    });
    new Gauge({
      name: 'pricing_agent_mirror_watermark_age_seconds',
      help: 'Age of each mirror stream watermark (how far behind the mirror may be).',
      labelNames: ['stream'],
      registers,
      async collect() {
        const mirrors = await sources.mirrors();
        this.reset();
        for (const m of mirrors) if (m.watermarkAgeSeconds !== null) this.set({ stream: m.stream }, m.watermarkAgeSeconds);
      },
    });
  }
}
