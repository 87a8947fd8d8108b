/**
 * Scheduled jobs (approved-prices pull, mirrors, per-store exports): node-cron decides when, this decides whether.
 * A job never overlaps itself, whether started by its schedule or on demand (start-up, `SIGHUP`); a tick that finds
 * it running is skipped and logged at debug. stop() stops the schedules and waits for the runs in flight (node-cron's
 * task.stop() does not wait: library notes).
 */
import cron, { type ScheduledTask } from 'node-cron';
import type { Clock } from '../clock.ts';
import type { Logger } from '../log.ts';

export interface ScheduledJob {
  readonly name: string;
  /** Cron expression (node-cron, seconds optional). */
  readonly schedule: string;
  /** Aborted when the agent drains: stop at the next checkpoint. */
  run(signal: AbortSignal): Promise<void>;
}

export interface JobStatus {
  readonly name: string;
  readonly schedule: string;
  readonly running: boolean;
  readonly runs: number;
  readonly failures: number;
  readonly lastStartedAt: string | null;
  readonly lastSuccessAt: string | null;
  readonly lastError: string | null;
}

interface JobState {
  job: ScheduledJob;
  task: ScheduledTask | null;
  running: Promise<void> | null;
  runs: number;
  failures: number;
  lastStartedAt: number | null;
  lastSuccessAt: number | null;
  lastError: string | null;
}

export interface SchedulerOptions {
  readonly logger: Logger;
  readonly clock: Clock;
  /** After every run (metrics). */
  readonly onRun?: (name: string, outcome: 'success' | 'failure', durationMs: number) => void;
}

let cronLoggerSet = false;

/** node-cron logs to the console by default (on every skipped overlap): route it to our logger once. */
function routeCronLogs(logger: Logger): void {
  if (cronLoggerSet) return;
  cronLoggerSet = true;
  const log = logger.child({ component: 'node-cron' });
  cron.setLogger({
    info: (m) => log.debug(m),
    warn: (m) => log.debug(m),
    error: (m, e) => log.warn({ error: String(e ?? m) }, 'node-cron error'),
    debug: (m) => log.trace(String(m)),
  });
}

export function isValidSchedule(expression: string): boolean {
  return cron.validate(expression);
}

export class Scheduler {
  readonly #o: SchedulerOptions;
  readonly #jobs = new Map<string, JobState>();
  readonly #stop = new AbortController();

  constructor(options: SchedulerOptions) {
    this.#o = options;
    routeCronLogs(options.logger);
  }

  add(job: ScheduledJob): void {
    if (this.#jobs.has(job.name)) throw new Error(`job ${job.name} is already scheduled`);
    this.#jobs.set(job.name, { job, task: null, running: null, runs: 0, failures: 0, lastStartedAt: null, lastSuccessAt: null, lastError: null });
  }

  /** Starts the schedule of every job that has none yet (after a reload, only the new ones). */
  start(): void {
    for (const state of this.#jobs.values()) {
      if (state.task) continue;
      state.task = cron.schedule(state.job.schedule, () => void this.runNow(state.job.name), { name: state.job.name, noOverlap: true });
    }
  }

  /** Removes a job (config reload); waits for its run in flight. */
  async remove(name: string): Promise<void> {
    const state = this.#jobs.get(name);
    if (!state) return;
    this.#jobs.delete(name);
    await state.task?.destroy();
    await state.running;
  }

  names(): string[] {
    return [...this.#jobs.keys()];
  }

  /** Runs a job now unless it is already running; resolves when that run ends. */
  async runNow(name: string): Promise<'ran' | 'skipped'> {
    const state = this.#jobs.get(name);
    if (!state || this.#stop.signal.aborted) return 'skipped';
    if (state.running) {
      this.#o.logger.debug({ job: name }, 'scheduled run skipped: the previous run is still going');
      return 'skipped';
    }
    state.running = this.#run(state);
    try {
      await state.running;
    } finally {
      state.running = null;
    }
    return 'ran';
  }

  async #run(state: JobState): Promise<void> {
    const started = this.#o.clock.now();
    state.runs += 1;
    state.lastStartedAt = started;
    try {
      await state.job.run(this.#stop.signal);
      state.lastSuccessAt = this.#o.clock.now();
      state.lastError = null;
      this.#o.onRun?.(state.job.name, 'success', this.#o.clock.now() - started);
    } catch (error) {
      state.failures += 1;
      state.lastError = error instanceof Error ? error.message : String(error);
      this.#o.onRun?.(state.job.name, 'failure', this.#o.clock.now() - started);
      if (!this.#stop.signal.aborted) this.#o.logger.error({ job: state.job.name, error: state.lastError }, 'scheduled job failed');
    }
  }

  status(): JobStatus[] {
    const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
    return [...this.#jobs.values()].map((s) => ({
      name: s.job.name,
      schedule: s.job.schedule,
      running: s.running !== null,
      runs: s.runs,
      failures: s.failures,
      lastStartedAt: iso(s.lastStartedAt),
      lastSuccessAt: iso(s.lastSuccessAt),
      lastError: s.lastError,
    }));
  }

  /** Stops the schedules, signals the runs in flight to stop at their next checkpoint, and waits for them. */
  async stop(): Promise<void> {
    this.#stop.abort(new Error('the agent is stopping'));
    for (const state of this.#jobs.values()) await state.task?.destroy();
    await Promise.all([...this.#jobs.values()].map((s) => s.running ?? Promise.resolve()));
  }
}
