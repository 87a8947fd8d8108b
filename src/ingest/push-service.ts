/**
 * The push side of the daemon: one inbox watcher and one queue per source. Files of a source are pushed one after
 * another, in the order they became complete (an ERP's exports keep their order); sources run side by side.
 *
 * Start-up resumes unfinished work first: files left in processing/ (claimed, uploading, waiting for a job) are
 * pushed again before new files are taken. A deferred file (API down, rate limited, key rejected, disk full) keeps
 * its place at the head of its source's queue, and the source waits for its retry time: a newer export sent in the
 * meantime would be overwritten by the older one when it is retried (and its cause would hold the newer one back
 * anyway). While the key is rejected nothing is sent: each queue waits on `waitForKey`.
 *
 * stop() drains: watchers stop, no new file is taken, the file being pushed stops after its batches in flight
 * are answered and committed (it stays in processing/ and is resumed at the next start).
 */
import { rm } from 'node:fs/promises';
import { API_ERROR_CODES } from '../api/errors.ts';
import type { Clock } from '../clock.ts';
import type { DeepReadonly } from '../config/index.ts';
import type { SourceConfig as MutableSourceConfig } from '../config/source-schema.ts';

/** A source as the frozen Config holds it. */
type SourceConfig = DeepReadonly<MutableSourceConfig>;
import type { Logger } from '../log.ts';
import { unfinishedFiles } from '../store/push-ledger.ts';
import { inboxFoldersProblem } from './inbox-file.ts';
import { compileSource } from './read/index.ts';
import { sourceDelta } from './delta/delta-plan.ts';
import { processClaimed, pushFile, type FileResult, type PushDeps, type PushSource } from './file/push-file.ts';
import { InboxWatcher } from './watch/inbox-watcher.ts';
import { nameRules } from './watch/file-name-rules.ts';

export interface PushServiceOptions {
  readonly deps: Omit<PushDeps, 'signal' | 'onProgress'>;
  readonly sources: readonly SourceConfig[];
  readonly clock: Clock;
  readonly logger: Logger;
  /** Resolves when the API key is usable; the daemon holds it while a 401 is unresolved. */
  readonly waitForKey?: (signal: AbortSignal) => Promise<void>;
  /** Every file's outcome (metrics, status). */
  readonly onResult?: (source: string, result: FileResult) => void;
}

type Job = { kind: 'path'; path: string } | { kind: 'file'; fileId: number };

export interface SourceStatus {
  readonly name: string;
  /** The source's inbox folder. */
  readonly inbox: string;
  readonly watcher: string;
  readonly waitingToBeStable: number;
  readonly queued: number;
  readonly busy: boolean;
  /** Why the inbox is not worked in (its agent folders are not the agent's own: inbox-file.ts), or null. */
  readonly refused: string | null;
}

/** How often a refused inbox is looked at again (ms): four lstat calls, so a fix is noticed soon. */
const REFUSED_RECHECK_MS = 5_000;

/** One source: its watcher, its queue, its worker. */
class SourceRunner {
  readonly source: PushSource;
  readonly #config: SourceConfig;
  readonly #o: PushServiceOptions;
  readonly #stop: AbortSignal;
  readonly #queue: Job[] = [];
  readonly #queuedPaths = new Set<string>();
  #wake: (() => void) | null = null;
  #busy = false;
  #refused: string | null = null;
  #worker: Promise<void> | null = null;
  readonly watcher: InboxWatcher;

  constructor(config: SourceConfig, options: PushServiceOptions, stop: AbortSignal) {
    this.#config = config;
    this.#o = options;
    this.#stop = stop;
    this.source = {
      name: config.name,
      entity: config.entity,
      mode: config.mode,
      inbox: config.path,
      batchSize: config.batch_size,
      read: compileSource(config),
      ...sourceDelta(config),
    };
    this.watcher = new InboxWatcher({
      dir: config.path,
      rules: nameRules(config.pattern, config.done_marker === false ? null : config.done_marker),
      stableMs: config.stable_ms,
      poll: config.poll,
      pollIntervalMs: config.poll_interval_ms,
      clock: options.clock,
      logger: options.logger.child({ source: config.name }),
      onReady: (path) => this.#enqueue({ kind: 'path', path }),
    });
  }

  async start(): Promise<void> {
    for (const file of await unfinishedFiles(this.#o.deps.db, this.#config.name)) this.#enqueue({ kind: 'file', fileId: file.id });
    this.#worker = this.#work();
    await this.watcher.start();
  }

  status(): SourceStatus {
    return {
      name: this.#config.name,
      inbox: this.#config.path,
      watcher: this.watcher.state,
      waitingToBeStable: this.watcher.waiting.length,
      queued: this.#queue.length,
      busy: this.#busy,
      refused: this.#refused,
    };
  }

  async stop(): Promise<void> {
    await this.watcher.close();
    this.#wake?.();
    await this.#worker;
  }

  #enqueue(job: Job): void {
    if (job.kind === 'path') {
      if (this.#queuedPaths.has(job.path)) return;
      this.#queuedPaths.add(job.path);
    }
    this.#queue.push(job);
    this.#wake?.();
  }

  /** Checks the inbox's agent folders before each file; says so once when it becomes refused, and when it is not. */
  async #inboxRefused(): Promise<boolean> {
    const problem = await inboxFoldersProblem(this.source.inbox);
    if (problem !== this.#refused) {
      if (problem !== null) this.#o.logger.error({ source: this.#config.name, error: problem }, 'inbox refused');
      else this.#o.logger.info({ source: this.#config.name }, 'inbox no longer refused');
      this.#refused = problem;
    }
    return problem !== null;
  }

  async #work(): Promise<void> {
    while (!this.#stop.aborted) {
      const job = this.#queue.shift();
      if (!job) {
        await new Promise<void>((resolve) => (this.#wake = resolve));
        this.#wake = null;
        continue;
      }
      // A path is deduplicated only while it waits in the queue. Once its push starts, the file leaves the inbox
      // (claimed into processing/), and a new file written under the same name is another file: the watcher hands
      // it over while this push is still finishing, and it must be queued, not taken for this one (it was dropped,
      // never to be seen again, when the path stayed "queued" until this push returned).
      if (job.kind === 'path') this.#queuedPaths.delete(job.path);
      if (await this.#inboxRefused()) {
        // Never worked in: the file stays where it is, its job waits at the head of the queue.
        this.#queue.unshift(job);
        if (job.kind === 'path') this.#queuedPaths.add(job.path);
        await this.#o.clock.sleep(REFUSED_RECHECK_MS, this.#stop).catch(() => undefined); // stopping
        continue;
      }
      try {
        await this.#o.waitForKey?.(this.#stop);
      } catch {
        this.#queue.unshift(job);
        if (job.kind === 'path') this.#queuedPaths.add(job.path);
        break; // stopping
      }
      this.#busy = true;
      let retryAt: number | null = null;
      try {
        const deps: PushDeps = { ...this.#o.deps, signal: this.#stop };
        const result = job.kind === 'path' ? await pushFile(deps, this.source, job.path) : await processClaimed(deps, this.source, job.fileId);
        // The file is no longer in the inbox: its done marker goes too, so it cannot complete a later file of that name.
        if (job.kind === 'path' && this.#config.done_marker !== false && result.outcome !== 'vanished') {
          await rm(job.path + this.#config.done_marker, { force: true });
        }
        this.#o.onResult?.(this.#config.name, result);
        if (result.outcome === 'deferred' && !this.#stop.aborted) {
          // Back to the head of the queue, ahead of newer files. A rejected key is not a failing API: the worker
          // goes straight back to waiting for the key; other deferrals wait for their retry time first.
          this.#queue.unshift({ kind: 'file', fileId: result.file.id });
          if (result.error.code !== API_ERROR_CODES.keyRejected) retryAt = Date.parse(result.retryAt);
        }
      } catch (error) {
        // An unexpected failure (a bug, the state database unusable): logged; the file stays where it is.
        this.#o.logger.error({ source: this.#config.name, error: String(error) }, 'push failed unexpectedly');
        if (job.kind === 'path') this.watcher.release(job.path);
      } finally {
        this.#busy = false;
      }
      if (retryAt !== null) await this.#o.clock.sleep(Math.max(0, retryAt - this.#o.clock.now()), this.#stop).catch(() => undefined); // stopping
    }
  }
}

export class PushService {
  readonly #options: PushServiceOptions;
  readonly #runners = new Map<string, { runner: SourceRunner; config: string; stop: AbortController }>();
  #started = false;
  /** Set by stop(): a start or reconfigure still under way starts no further source (nobody would stop it). */
  #stopping = false;

  constructor(options: PushServiceOptions) {
    this.#options = options;
  }

  async start(): Promise<void> {
    this.#started = true;
    await this.reconfigure(this.#options.sources);
  }

  /**
   * Applies a new `sources:` list (SIGHUP): removed or changed sources drain and stop, new or changed ones start.
   * Unchanged sources are not touched, so their work in flight goes on.
   */
  async reconfigure(sources: readonly SourceConfig[]): Promise<{ added: string[]; removed: string[] }> {
    const wanted = new Map(sources.map((s) => [s.name, s]));
    const removed: string[] = [];
    for (const [name, entry] of this.#runners) {
      const next = wanted.get(name);
      if (next && JSON.stringify(next) === entry.config) continue;
      entry.stop.abort(new Error('source removed or changed'));
      await entry.runner.stop();
      this.#runners.delete(name);
      removed.push(name);
    }
    const added: string[] = [];
    for (const config of sources) {
      if (this.#stopping) break;
      if (this.#runners.has(config.name)) continue;
      const stop = new AbortController();
      const runner = new SourceRunner(config, this.#options, stop.signal);
      this.#runners.set(config.name, { runner, config: JSON.stringify(config), stop });
      if (this.#started) await runner.start();
      added.push(config.name);
    }
    return { added, removed };
  }

  status(): SourceStatus[] {
    return [...this.#runners.values()].map((e) => e.runner.status());
  }

  /** Stops taking work and waits for the file in flight to checkpoint. */
  async stop(): Promise<void> {
    this.#stopping = true;
    for (const entry of this.#runners.values()) entry.stop.abort(new Error('the agent is stopping'));
    await Promise.all([...this.#runners.values()].map((e) => e.runner.stop()));
  }
}
