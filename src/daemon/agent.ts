/**
 * The long-running agent behind `pricing-agent run`: inbox watchers, scheduled jobs, the key monitor, WAL
 * maintenance, the local HTTP server and the feed listener (when `feed.listen` is set), with an explicit lifecycle:
 *
 *   starting -> running -> draining -> stopped          (failed: start-up could not complete)
 *
 * Start-up resumes unfinished work before anything new: files in processing/ (push service), pending delivery
 * intents, unacknowledged ids and interrupted listings (each scheduled job runs once at start). The feed listens
 * before the first pull runs, so that POS systems waiting on it see its commits. A drain answers the feed's waiting
 * long-polls and closes it first, then stops taking work, lets batches in flight finish and checkpoint, and closes the
 * database (checkpointing the WAL).
 */
import { connectApi, pacingOf, type ApiConnection } from '../api-from-config.ts';
import { consoleHandler, type ConsoleContext } from '../console/console-server.ts';
import { systemClock, type Clock } from '../clock.ts';
import { readApiKey, type Config } from '../config/index.ts';
import { PushService } from '../ingest/push-service.ts';
import { ApplyDeadlineMonitor } from '../feed/apply-deadline.ts';
import { FeedServer } from '../feed/server.ts';
import type { Logger } from '../log.ts';
import { listStreamStates } from '../store/mirrors.ts';
import { openStateDb } from '../store/open-state-db.ts';
import { listConsumers, maxSeq } from '../store/price-feed.ts';
import type { StateDb } from '../store/state-db.ts';
import { heldCounts } from '../status/held-files.ts';
import { startHealthServer, type HealthServer } from './http-server.ts';
import type { Readiness } from '../status/readiness.ts';
import { scheduledJobs } from './jobs.ts';
import { KEY_STATE_REASONS, KeyMonitor, keyCheckOf } from './key-monitor.ts';
import { AgentMetrics } from './metrics.ts';
import { Scheduler } from './scheduler.ts';
import { StateDirGuard } from './state-dir.ts';
import { HaCoordinator } from './ha-coordinator.ts';
import { AGENT_VERSION } from '../version.ts';
import { API_ERROR_CODES, ApiError } from '../api/errors.ts';
import { apiWaitView } from '../status/api-wait.ts';

export const AGENT_STATES = ['starting', 'running', 'draining', 'stopped', 'failed'] as const;
export type AgentState = (typeof AGENT_STATES)[number];

export { MIN_FREE_STATE_BYTES } from './state-dir.ts';

export interface AgentOptions {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** Loads the config again for SIGHUP; throws a ConfigError when the new file is invalid. */
  readonly reloadConfig?: () => Promise<Config>;
}

/** Settings a reload (SIGHUP) cannot apply: each needs a restart, and a reload that changes one says so. */
const RESTART_SETTINGS: readonly (readonly [string, (config: Config) => unknown])[] = [
  ['api.base_url', (c) => c.api.base_url],
  ['api.proxy', (c) => c.api.proxy],
  ['api.ca_file', (c) => c.api.ca_file],
  ['state', (c) => c.state],
  ['http.enabled', (c) => c.http.enabled],
  ['http.host', (c) => c.http.host],
  ['http.port', (c) => c.http.port],
  ['http.console', (c) => c.http.console],
  ['ha', (c) => c.ha],
];

export class Agent {
  #config: Config;
  readonly #logger: Logger;
  readonly #clock: Clock;
  #state: AgentState = 'starting';
  #db: StateDb | null = null;
  #api: ApiConnection | null = null;
  #keys: KeyMonitor | null = null;
  #push: PushService | null = null;
  #scheduler: Scheduler | null = null;
  #http: HealthServer | null = null;
  #metrics: AgentMetrics | null = null;
  #feed: FeedServer | null = null;
  #deadline: ApplyDeadlineMonitor | null = null;
  /** With ha.enabled: this node's role; without, null (the agent is always active). */
  #ha: HaCoordinator | null = null;
  readonly #reloadConfig: (() => Promise<Config>) | undefined;
  readonly #stateDir: StateDirGuard;

  constructor(options: AgentOptions) {
    this.#config = options.config;
    this.#logger = options.logger;
    this.#clock = options.clock ?? systemClock;
    this.#reloadConfig = options.reloadConfig;
    this.#stateDir = new StateDirGuard({ dir: () => this.#config.state.dir, dbPath: () => this.#db?.localFile ?? null, clock: this.#clock, logger: this.#logger });
  }

  get state(): AgentState {
    return this.#state;
  }

  get httpUrl(): string | null {
    return this.#http?.url ?? null;
  }

  async start(): Promise<void> {
    const config = this.#config;
    try {
      const ha = config.ha.enabled ? config.ha : null;
      const db = await openStateDb(config.state, {
        now: () => this.#clock.now(),
        onBackup: (file) => this.#logger.info({ backup: file }, `the state is upgraded: a backup of it was written to ${file}`),
        onNoBackup: (why) => this.#logger.warn(`the state is upgraded without a backup: ${why}`),
        // A node frozen inside a transaction must not hold a takeover back past the lease (library notes).
        ...(ha ? { idleInTransactionTimeoutMs: Math.trunc((ha.lease_s * 1000) / 2) } : {}),
      });
      this.#db = db;
      const deadline = new ApplyDeadlineMonitor({ db, feed: () => this.#config.feed, clock: this.#clock, logger: this.#logger });
      this.#deadline = deadline;
      const metrics = new AgentMetrics({
        outbox: async () => ({ feedRows: await maxSeq(db), consumers: (await listConsumers(db)).map((c) => ({ name: c.consumer, lag: c.lag })) }),
        mirrors: async () =>
          (await listStreamStates(db)).map((s) => ({
            stream: s.stream,
            watermarkAgeSeconds: s.watermark ? Math.max(0, (this.#clock.now() - Date.parse(s.watermark)) / 1000) : null,
          })),
        ready: () => this.readiness().ready,
        feed: async () => (this.#config.feed.consumers.length === 0 ? null : deadline.overview()),
        heldFiles: () => heldCounts(db),
      });
      this.#metrics = metrics;
      const api = connectApi(config.api, this.#logger, {
        clock: this.#clock,
        pacing: pacingOf(db, this.#logger),
        refuseRejectedKey: true,
        hooks: {
          onResponse: (e) => metrics.apiRequests.inc({ operation: e.operation, status: String(e.status) }),
          onRetry: (e) => metrics.apiRetries.inc({ operation: e.operation }),
          onRateLimited: (e) => {
            metrics.rateLimitWaits.inc();
            metrics.rateLimitWaitSeconds.inc(e.waitMs / 1000);
          },
          onKeyRejected: () => this.#keys?.reportRejected(),
          // HA: only the active node sends, and only within its lease (a node paused past it sends nothing).
          ...(ha ? { beforeSend: (e: { operation: string }) => this.#refuseUnlessActive(e.operation) } : {}),
        },
      });
      this.#api = api;
      const keys = new KeyMonitor({
        client: api.client,
        readKey: () => readApiKey(this.#config.api),
        clock: this.#clock,
        logger: this.#logger,
        intervalMs: config.daemon.key_check_interval_ms,
        onState: (state) => metrics.keyRejected.set(state === 'rejected' ? 1 : 0),
      });
      this.#keys = keys;
      if (config.http.enabled) {
        this.#http = await startHealthServer({
          host: config.http.host,
          port: config.http.port,
          readiness: () => this.readiness(),
          refresh: () => api.client.transport.refreshWaitWindow(),
          registry: metrics.registry,
          state: () => this.#state,
          allowedHosts: () => this.#config.http.allowed_hosts,
          ...(config.http.console ? { console: consoleHandler(this.#consoleContext()) } : {}),
        });
      }
      // Every node serves the feed, a standby too (docs/ha.md): it reads the shared state, and a consumer's own
      // writes (offsets, confirmations) are stored by any node. It listens before the first pull runs, so that POS
      // systems waiting on it see its commits.
      if (config.feed.listen !== null) this.#feed = await this.#startFeed(db, metrics);
      if (ha) {
        const coordinator = new HaCoordinator({
          db,
          node: ha.node_name,
          leaseMs: ha.lease_s * 1000,
          clock: this.#clock,
          logger: this.#logger,
          version: AGENT_VERSION,
          onActive: () => this.#startWork(),
          onStandby: () => this.#stopWork(),
          onRole: (role) => metrics.setHaRole(role),
        });
        this.#ha = coordinator;
        metrics.setHaRole('standby');
        coordinator.start();
      } else {
        await this.#startWork();
      }
      db.startMaintenance({
        isIdle: () => this.#isIdle(),
        onError: (error) => this.#logger.warn({ error: String(error) }, 'state database housekeeping failed; tried again at the next tick'),
      });
      this.#state = 'running';
      this.#logger.info(
        {
          sources: config.sources.length,
          jobs: this.#scheduler?.names() ?? [],
          http: this.#http?.url ?? null,
          feed: this.#feed?.url ?? null,
          api_key_state: this.#keys.state,
          state_dir: config.state.dir,
          ...(ha ? { ha_node: ha.node_name, ha_role: this.#ha?.role ?? 'standby' } : {}),
        },
        'pricing-agent running',
      );
    } catch (error) {
      this.#state = 'failed';
      await this.#closeAll();
      throw error;
    }
  }

  /**
   * The work of the active node (every node without HA): the apply deadlines, the key check, the watchers and the
   * schedules. Unfinished files, pulls and listings are resumed first. (The feed is not work: every node serves it.)
   */
  async #startWork(): Promise<void> {
    const config = this.#config;
    const db = this.#db;
    const api = this.#api;
    const keys = this.#keys;
    const metrics = this.#metrics;
    const deadline = this.#deadline;
    if (!db || !api || !keys || !metrics || !deadline) throw new Error('the agent is not started');
    // HA: the node may have stepped down (or the agent begun to drain) while this was starting: start nothing more.
    const wanted = () => this.#state !== 'draining' && this.#state !== 'stopped' && (this.#ha === null || this.#ha.mayAct());
    if (config.feed.consumers.length > 0) deadline.start();
    const keyState = await keys.verify();
    if (!wanted()) return;
    // Work is taken only with a usable state directory and a working key (found by the chaos suite's disk tests:
    // with the state disk full or read-only the agent kept claiming files and starting pulls it could not record).
    const waitForKey = (signal: AbortSignal) => this.#waitForWork(signal);
    this.#push = new PushService({
      deps: { db, client: api.client, clock: this.#clock, logger: this.#logger, maxInFlight: config.api.max_connections },
      sources: config.sources,
      clock: this.#clock,
      logger: this.#logger,
      waitForKey,
      onResult: (source, result) => {
        metrics.files.inc({ source, outcome: result.outcome });
        if ('file' in result && (result.outcome === 'done' || result.outcome === 'failed')) {
          const f = result.file;
          metrics.rows.inc({ entity: f.entity, result: 'accepted' }, f.rows_accepted ?? 0);
          metrics.rows.inc({ entity: f.entity, result: 'rejected' }, f.rows_rejected ?? 0);
          metrics.rows.inc({ entity: f.entity, result: 'superseded' }, f.rows_superseded ?? 0);
          metrics.rows.inc({ entity: f.entity, result: 'merged' }, f.rows_merged ?? 0);
          metrics.rows.inc({ entity: f.entity, result: 'unchanged' }, f.rows_unchanged ?? 0);
          metrics.rows.inc({ entity: f.entity, result: 'skipped' }, f.rows_skipped ?? 0);
        }
      },
    });
    await this.#push.start();
    if (!wanted()) return; // stopped while its sources started (#stopWork stopped them): no schedules either
    this.#scheduler = new Scheduler({
      logger: this.#logger,
      clock: this.#clock,
      onRun: (name, outcome) => {
        metrics.jobRuns.inc({ job: name, outcome });
        if (outcome === 'success') metrics.jobLastSuccess.set({ job: name }, this.#clock.now() / 1000);
      },
    });
    for (const job of scheduledJobs(config, { db, client: api.client, clock: this.#clock, logger: this.#logger, metrics, waitForKey })) {
      this.#scheduler.add(job);
    }
    this.#scheduler.start();
    // Unfinished pulls and listings are resumed at once, not at the next tick.
    for (const name of this.#scheduler.names()) void this.#scheduler.runNow(name);
    if (this.#ha) this.#logger.info({ api_key_state: keyState, sources: config.sources.length }, 'HA: taking work as the active node');
  }

  /** Stops the work of #startWork (HA: the lease was lost, or the agent drains). Batches in flight finish or are refused. */
  async #stopWork(): Promise<void> {
    const [push, scheduler] = [this.#push, this.#scheduler];
    this.#push = null;
    this.#scheduler = null;
    this.#deadline?.stop();
    await Promise.all([push?.stop(), scheduler?.stop()]);
  }

  /** HA: refuses a request of a node that is not the active one, or whose lease may have ended. */
  #refuseUnlessActive(operation: string): void {
    if (this.#ha === null || this.#ha.mayAct()) return;
    throw new ApiError(API_ERROR_CODES.aborted, `node ${this.#ha.node} is not the active node (or its lease ended): nothing is sent`, {
      operation,
      retryable: false,
    });
  }

  /** What the web console reads: the config in force, this agent's own readiness and key state. */
  #consoleContext(): ConsoleContext {
    return {
      config: () => this.#config,
      now: () => new Date(this.#clock.now()),
      readiness: () => this.readiness(),
      agentState: () => this.#state,
      readyzUrl: () => (this.#http === null ? null : `${this.#http.url}/readyz`),
      apiKey: () => keyCheckOf(this.#keys?.state ?? 'unknown', this.#config.api.base_url, this.#api?.client.transport.unreachable ?? null),
    };
  }

  #startFeed(db: StateDb, metrics: AgentMetrics): Promise<FeedServer> {
    return FeedServer.start({
      db,
      config: this.#config.feed,
      clock: this.#clock,
      logger: this.#logger.child({ component: 'feed' }),
      events: {
        answered: (consumer, status) => {
          if (consumer === null) {
            if (status === 401 || status === 429) metrics.feedUnauthorized.inc();
            return;
          }
          metrics.feedRequests.inc({ consumer });
          if (status === 429) metrics.feedRateLimited.inc({ consumer });
        },
        served: (consumer, rows) => metrics.feedRowsServed.inc({ consumer }, rows),
        connections: (open) => metrics.feedConnections.set(open),
        waiting: (count) => metrics.feedWaiting.set(count),
      },
    });
  }

  readiness(): Readiness {
    const reasons: string[] = [];
    if (this.#state !== 'running') reasons.push(`the agent is ${this.#state}`);
    const standby = this.#ha !== null && this.#ha.role === 'standby';
    const key = this.#keys?.state ?? 'unknown';
    // A standby sends nothing, so it has not checked the key: the active node that takes over does.
    if (key !== 'ok' && !standby) reasons.push(KEY_STATE_REASONS[key]);
    const stateProblem = this.#stateDir.problem();
    if (stateProblem) reasons.push(stateProblem);
    for (const source of this.#push?.status() ?? []) {
      if (source.watcher === 'missing') reasons.push(`the inbox folder of source ${source.name} is missing (${source.inbox}): create it, or mount the share`);
      if (source.refused !== null) reasons.push(`source ${source.name}: ${source.refused}`);
    }
    const wait = this.#api?.client.transport.waitWindow ?? null;
    return {
      ready: reasons.length === 0,
      reasons,
      ...(this.#ha ? { role: this.#ha.role, node: this.#ha.node } : {}),
      ...(wait === null ? {} : { api_wait: apiWaitView(wait) }),
    };
  }

  /** Resolves when the state directory can take work and the key works; rejects on a drain. */
  async #waitForWork(signal: AbortSignal): Promise<void> {
    await this.#stateDir.waitUntilUsable(signal);
    await this.#keys?.waitForKey(signal);
  }

  #isIdle(): boolean {
    const pushing = (this.#push?.status() ?? []).some((s) => s.busy || s.queued > 0);
    const jobs = (this.#scheduler?.status() ?? []).some((j) => j.running);
    return !pushing && !jobs;
  }

  /** SIGHUP: loads the config again; an invalid one is refused and the running one stays. */
  async reload(): Promise<boolean> {
    if (!this.#reloadConfig || this.#state !== 'running') return false;
    let next: Config;
    try {
      next = await this.#reloadConfig();
    } catch (error) {
      this.#logger.error({ error: error instanceof Error ? error.message : String(error) }, 'reload refused: the new config is invalid; the running config stays');
      return false;
    }
    try {
      await this.#apply(next);
      return true;
    } catch (error) {
      this.#logger.error({ error: error instanceof Error ? error.message : String(error) }, 'reload failed part-way; restart the agent to apply the config');
      return false;
    }
  }

  async #apply(next: Config): Promise<void> {
    const previous = this.#config;
    this.#config = next;
    // Settings a running agent holds open (its connections, its database, its listener): a reload cannot move them.
    const needRestart = RESTART_SETTINGS.filter(([, of]) => JSON.stringify(of(next)) !== JSON.stringify(of(previous))).map(([name]) => name);
    if (needRestart.length > 0) this.#logger.warn({ settings: needRestart }, `${needRestart.join(', ')} changed: restart the agent to apply them`);
    this.#logger.level = next.log.level;
    if (this.#feed) await this.#feed.reconfigure(next.feed);
    else if (next.feed.listen !== null) this.#logger.warn('feed.listen is now set: restart the agent to start the feed');
    this.#deadline?.stop();
    if (next.feed.consumers.length > 0 && this.#ha?.role !== 'standby') this.#deadline?.start(); // the active's work
    const sources = await this.#push?.reconfigure(next.sources);
    await this.#reschedule(next);
    void this.#keys?.verify();
    this.#logger.info({ sources_added: sources?.added ?? [], sources_removed: sources?.removed ?? [] }, 'config reloaded');
  }

  async #reschedule(config: Config): Promise<void> {
    const scheduler = this.#scheduler;
    const db = this.#db;
    const api = this.#api;
    const keys = this.#keys;
    const metrics = this.#metrics;
    if (!scheduler || !db || !api || !keys || !metrics) return;
    const jobs = scheduledJobs(config, { db, client: api.client, clock: this.#clock, logger: this.#logger, metrics, waitForKey: (s) => this.#waitForWork(s) });
    const current = new Map(scheduler.status().map((j) => [j.name, j.schedule]));
    for (const name of current.keys()) {
      const next = jobs.find((j) => j.name === name);
      if (!next || next.schedule !== current.get(name)) await scheduler.remove(name);
    }
    const remaining = new Set(scheduler.names());
    for (const job of jobs) if (!remaining.has(job.name)) scheduler.add(job);
    scheduler.start();
  }

  /** Drains: stops taking work, lets work in flight checkpoint, closes the database. */
  async stop(): Promise<void> {
    if (this.#state === 'stopped' || this.#state === 'draining') return;
    this.#state = 'draining';
    this.#logger.info('draining: finishing work in flight');
    this.#keys?.stop();
    await this.#feed?.close(); // waiting long-polls are answered first
    // HA: the work stops (its batches in flight commit while the lease holds), then the lease is released so that
    // the standby takes over at once.
    await this.#stopWork();
    await this.#ha?.stop();
    await this.#closeAll();
    this.#state = 'stopped';
    this.#logger.info('pricing-agent stopped');
  }

  async #closeAll(): Promise<void> {
    this.#deadline?.stop();
    await this.#feed?.close();
    this.#keys?.stop();
    await this.#http?.close();
    await this.#api?.close();
    await this.#db?.close();
  }
}
