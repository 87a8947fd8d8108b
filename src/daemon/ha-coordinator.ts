/**
 * This daemon's role in an active/standby pair (issue 15, `ha.enabled`): every lease_s / 3 it renews the lease it
 * holds (active) or tries to take it (standby), through src/store/ha-lease.ts, on the database's clock.
 *
 *   standby --lease taken--> active --renewal refused, or not renewed in time--> standby --> ...
 *
 * - Becoming active: the store is fenced with the new token (every commit checks it), then `onActive` starts the
 *   work (watchers, schedules). Files a dead active left in processing/ are resumed by the push service's
 *   start-up from their last checkpoint, as after a restart.
 * - Stepping down: `onStandby` stops the work. The fence keeps the old token, so nothing commits meanwhile, and
 *   `mayAct` is false, so nothing is sent (the API client asks it before every request: `beforeSend`).
 * - Paused past the lease (SIGSTOP, a VM freeze, a long GC): on waking, `mayAct` is already false (the lease's end,
 *   as last renewed, by this process's clock, with a margin), so nothing goes out before the loop finds the lease
 *   lost and steps down; a commit would be refused by the fence anyway.
 * - Cut off (a cable pulled, the database silent: no error, no answer): a renewal still unanswered when the lease
 *   ends by this process's clock is given up and the node steps down then, so that /readyz and status stop calling
 *   it active while the other node takes over. Its late answer, if the network comes back, is ignored.
 * - A standby sends nothing and commits nothing of the agent's work (fenced with token 0, which no lease has); it
 *   serves /healthz, /readyz (ready, role standby), /metrics and the feed (the agent starts it on every node: a
 *   consumer's own offsets and confirmations are not the agent's work and are stored by any node, docs/ha.md).
 */
import type { Clock } from '../clock.ts';
import type { Logger } from '../log.ts';
import { HaLease, type LeaseGrant } from '../store/ha-lease.ts';
import type { StateDb } from '../store/state-db.ts';

export type HaRoleName = 'active' | 'standby';

export interface HaCoordinatorOptions {
  readonly db: StateDb;
  readonly node: string;
  readonly leaseMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly version: string;
  /** The lease was taken: start the work. */
  readonly onActive: () => Promise<void>;
  /** The lease was lost (or the daemon drains): stop the work. */
  readonly onStandby: () => Promise<void>;
  /** The role changed (metrics). */
  readonly onRole?: (role: HaRoleName) => void;
}

/** Before the lease's end as last renewed: this node stops acting this much earlier (clocks run at slightly different rates). */
const MARGIN_MS = 1_000; // 1 s

export class HaCoordinator {
  readonly #options: HaCoordinatorOptions;
  readonly #lease: HaLease;
  readonly #stop = new AbortController();
  #role: HaRoleName = 'standby';
  #token: number | null = null;
  /** By this process's clock: this node may send until then. */
  #validUntil = 0;
  #loop: Promise<void> | null = null;
  /** The work starting (onActive): not awaited by the loop, so that renewals go on meanwhile. */
  #starting: Promise<void> = Promise.resolve();
  #failing = false; // logged once per episode

  constructor(options: HaCoordinatorOptions) {
    this.#options = options;
    this.#lease = new HaLease(options.db, options.node, options.leaseMs);
    this.#lease.fence(0); // a standby commits nothing
  }

  get role(): HaRoleName {
    return this.#role;
  }

  get node(): string {
    return this.#options.node;
  }

  /** Whether this node may send and commit now: active, and within its lease as last renewed. */
  mayAct(): boolean {
    return this.#role === 'active' && this.#options.clock.now() < this.#validUntil;
  }

  /** Starts trying to take the lease (at once, then every lease_s / 3). */
  start(): void {
    this.#loop ??= this.#run();
  }

  /** Stops the loop; an active node stops its work and releases the lease, so that a standby takes over at once. */
  async stop(): Promise<void> {
    this.#stop.abort(new Error('draining'));
    await this.#loop;
    const token = this.#token;
    if (this.#role === 'active') await this.#stepDown('the agent is stopping');
    try {
      if (token !== null) await this.#lease.release(token);
      await this.#lease.announce('stopped', null, this.#options.version);
    } catch (error) {
      this.#options.logger.warn({ error: String(error) }, 'could not release the HA lease; the standby takes over when it expires');
    }
  }

  async #run(): Promise<void> {
    const { clock, leaseMs, logger, version } = this.#options;
    await this.#lease.announce('standby', null, version, true).catch(() => undefined);
    while (!this.#stop.signal.aborted) {
      try {
        await this.#withinLease(this.#step());
        if (this.#failing) logger.info('the HA lease is reachable again');
        this.#failing = false;
      } catch (error) {
        if (!this.#failing) logger.warn({ error: String(error) }, 'could not reach the HA lease; trying again');
        this.#failing = true;
        // Not renewed in time (the database away): stop acting before the lease ends for the others.
        if (this.#role === 'active' && !this.mayAct()) await this.#stepDown('the lease could not be renewed in time');
      }
      try {
        await clock.sleep(Math.max(500, Math.trunc(leaseMs / 3)), this.#stop.signal);
      } catch {
        return; // draining
      }
    }
  }

  /**
   * Waits for `step`, but for an active node no longer than its lease: a renewal the database never answers (it is
   * unreachable without any error, as when a cable is pulled) fails when the lease ends by this process's clock.
   */
  async #withinLease(step: Promise<void>): Promise<void> {
    if (this.#role !== 'active') return step;
    const { clock } = this.#options;
    const settled = new AbortController();
    const expired = clock.sleep(Math.max(0, this.#validUntil - clock.now()), AbortSignal.any([settled.signal, this.#stop.signal])).then(() => {
      throw new Error('the HA lease could not be renewed before it ended (no answer from the database)');
    });
    try {
      await Promise.race([step, expired]);
    } finally {
      settled.abort();
    }
  }

  async #step(): Promise<void> {
    const { clock, version } = this.#options;
    const sentAt = clock.now();
    if (this.#role === 'active' && this.#token !== null) {
      const token = this.#token;
      const grant = await this.#lease.renew(token);
      if (this.#token !== token) return; // answered after #withinLease gave up on it: this node stood down meanwhile
      if (grant === null || !this.mayAct()) {
        // Lost, or renewed too late to know that no other node took over in between: step down either way.
        await this.#stepDown(grant === null ? 'another node took the lease over (or it expired)' : 'the lease was renewed too late');
        return;
      }
      this.#hold(grant, sentAt);
      await this.#lease.announce('active', grant.token, version);
      return;
    }
    if (this.#stop.signal.aborted) return;
    const grant = await this.#lease.tryAcquire();
    if (grant === null) {
      await this.#lease.announce('standby', null, version);
      return;
    }
    this.#token = grant.token;
    this.#lease.fence(grant.token);
    this.#hold(grant, sentAt);
    this.#setRole('active');
    await this.#lease.announce('active', grant.token, version);
    this.#options.logger.info({ node: this.#options.node, lease_token: grant.token, lease_ms: this.#options.leaseMs }, 'HA: this node is now the active one');
    // Not awaited: the key check and the start-up of the work may take longer than a renewal interval.
    this.#starting = this.#options.onActive().catch((error: unknown) => {
      this.#options.logger.error({ error: String(error) }, 'HA: the work of the active node could not start; it steps down at the next renewal');
      this.#validUntil = 0;
    });
  }

  #hold(grant: LeaseGrant, sentAt: number): void {
    this.#validUntil = sentAt + grant.validMs - Math.min(MARGIN_MS, grant.validMs / 10);
  }

  async #stepDown(reason: string): Promise<void> {
    this.#validUntil = 0;
    this.#setRole('standby'); // the fence keeps the old token: nothing of the work still stopping commits
    this.#options.logger.warn({ node: this.#options.node, lease_token: this.#token, reason }, 'HA: this node steps down to standby');
    this.#token = null;
    try {
      await this.#starting; // a work still starting is stopped once it has started
      await this.#options.onStandby();
    } finally {
      await this.#lease.announce('standby', null, this.#options.version).catch(() => undefined);
    }
  }

  #setRole(role: HaRoleName): void {
    this.#role = role;
    this.#options.onRole?.(role);
  }
}
