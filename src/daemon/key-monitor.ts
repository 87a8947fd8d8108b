/**
 * Whether the API key works, for everything that needs it. A 401 is not a transient error (the key was rotated or
 * revoked): everything that sends holds at `waitForKey`, the agent is not ready, the log says once what to do, and
 * the key is checked again every interval, re-reading api.key_file each time, so a new key written to the file (or
 * given by SIGHUP) is picked up without a restart.
 *
 * A rejected key never works again (the spec: a new key replaces the old one at once), so the check sends a request
 * only when the key has changed: a rotated key costs the API a handful of 401s, not one a minute for as long as
 * nobody notices. When the API was merely unreachable, the same key is verified again every interval.
 *
 * At a 401 the key file is read at once, before anything pauses for an interval (issue 11, failure 10): whoever
 * rotated the key has usually written the new one already, and the agent goes on with it without a pause. While
 * the key does not work, the file is also read again every couple of seconds (a local read: the API is asked only
 * when the file holds a key not yet tried), so a key written later, or caught half-written at the 401 (`echo KEY >
 * file` empties the file first), is picked up within seconds, not at the next interval.
 */
import { ApiError, API_ERROR_CODES } from '../api/errors.ts';
import type { ApiClient } from '../api/client.ts';
import type { Clock } from '../clock.ts';
import type { Logger } from '../log.ts';
import type { KeyCheck } from '../status/status-report.ts';
import { explainApiError } from '../api/explain-error.ts';

export type KeyState = 'unknown' | 'ok' | 'rejected' | 'unreachable';

/** What the agent says about its key, by state: the readiness reasons and the console use the same words. */
export const KEY_STATE_REASONS = {
  rejected: 'the API rejected the key (401): put a new key in api.key_file or api.key',
  unreachable: 'the API could not be reached to verify the key',
  unknown: 'the API key has not been verified yet',
} as const satisfies Record<Exclude<KeyState, 'ok'>, string>;

/**
 * The key as `status` reports it (KeyCheck), from what the monitor knows: no request. A key that worked, while the
 * API answers nothing now (`unreachable`: the transport's last requests), is shown as unreachable, with what to check.
 */
export function keyCheckOf(state: KeyState, baseUrl: string, unreachable: { since: number; error: unknown } | null = null): KeyCheck {
  if (state === 'ok' && unreachable !== null) {
    const since = new Date(unreachable.since).toISOString().slice(0, 16).replace('T', ' ');
    return { state: 'unreachable', base_url: baseUrl, message: `no answer from the API since ${since} UTC: ${explainApiError(unreachable.error, baseUrl)}` };
  }
  if (state === 'ok') return { state: 'ok', base_url: baseUrl };
  if (state === 'unknown') return { state: 'skipped', base_url: baseUrl, message: KEY_STATE_REASONS.unknown };
  return { state, base_url: baseUrl, message: KEY_STATE_REASONS[state] };
}

/** While the key does not work, how often api.key_file is read again for a key not yet tried. */
export const KEY_FILE_REREAD_MS = 2_000; // 2 s

export interface KeyMonitorOptions {
  readonly client: ApiClient;
  /** The current key: api.key, or api.key_file read again. */
  readonly readKey: () => Promise<string>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly intervalMs: number;
  readonly onState?: (state: KeyState) => void;
}

export class KeyMonitor {
  readonly #o: KeyMonitorOptions;
  readonly #stop = new AbortController();
  #state: KeyState = 'unknown';
  #waiters: (() => void)[] = [];
  #checking: Promise<void> | null = null;
  #lastVerifiedAt: number | null = null;
  /** The key the API last rejected: not sent again. */
  #rejectedKey: string | null = null;
  #currentKey: string | null = null;

  constructor(options: KeyMonitorOptions) {
    this.#o = options;
  }

  get state(): KeyState {
    return this.#state;
  }

  get lastVerifiedAt(): number | null {
    return this.#lastVerifiedAt;
  }

  /** Verifies the key now (start-up, SIGHUP). Keeps checking in the background while it does not work. */
  async verify(): Promise<KeyState> {
    await this.#checkOnce();
    if (this.#state !== 'ok') this.#startChecking();
    return this.#state;
  }

  /**
   * Called when any request got a 401. Work holds at once (waitForKey); the key file is read again right away, and
   * only when it holds no other working key does the agent say so and check again every interval.
   */
  reportRejected(): void {
    if (this.#state === 'rejected') return;
    this.#rejectedKey = this.#currentKey;
    this.#setState('rejected');
    void this.#checkOnce().then(() => {
      if (this.#state === 'ok') {
        this.#o.logger.info('the API rejected the old key; the key file holds a new one, which works: sending goes on');
        return;
      }
      this.#o.logger.error(
        { check_every_ms: this.#o.intervalMs },
        'the API rejected the key (401): sending is paused. Generate a new key in the web application and put it in ' +
          'api.key_file (picked up automatically) or api.key (then send SIGHUP); nothing is lost meanwhile',
      );
      this.#startChecking();
    });
  }

  /** Resolves once the key works; rejects when the agent stops. */
  waitForKey(signal: AbortSignal): Promise<void> {
    if (this.#state === 'ok') return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error('stopped'));
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  stop(): void {
    this.#stop.abort();
  }

  #setState(state: KeyState): void {
    if (state === this.#state) return;
    this.#state = state;
    this.#o.onState?.(state);
    if (state === 'ok') {
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const wake of waiters) wake();
    }
  }

  async #checkOnce(): Promise<void> {
    try {
      const key = await this.#o.readKey();
      if (key === this.#rejectedKey) {
        this.#o.logger.debug('the API key is unchanged since the API rejected it; not sending it again');
        return;
      }
      this.#currentKey = key;
      this.#o.client.transport.setApiKey(key);
      await this.#o.client.auth.verify({ signal: this.#stop.signal });
      const wasDown = this.#state === 'rejected' || this.#state === 'unreachable';
      this.#lastVerifiedAt = this.#o.clock.now();
      this.#setState('ok');
      if (wasDown) this.#o.logger.info('the API key works again; sending resumes');
    } catch (error) {
      if (error instanceof ApiError && error.code === API_ERROR_CODES.keyRejected) {
        this.#rejectedKey = this.#currentKey;
        this.#setState('rejected');
      }
      else if (error instanceof ApiError && error.code === API_ERROR_CODES.aborted) return;
      else {
        // The API is unreachable (or the key file unreadable): not known to be a key problem.
        if (this.#state !== 'rejected') this.#setState('unreachable');
        // What to check, as `check` says it: the daemon's start is where a wrong URL or a firewall is first met.
        const advice = explainApiError(error, this.#o.client.transport.baseUrl);
        this.#o.logger.warn({ error: error instanceof Error ? error.message : String(error) }, `could not verify the API key: ${advice}`);
      }
    }
  }

  /** Whether api.key_file (or api.key) now holds a key neither in use nor rejected; an unreadable or empty file does not. */
  async #holdsUntriedKey(): Promise<boolean> {
    try {
      const key = await this.#o.readKey();
      return key !== this.#currentKey && key !== this.#rejectedKey;
    } catch {
      return false;
    }
  }

  #startChecking(): void {
    if (this.#checking) return;
    this.#checking = (async () => {
      let checkedAt = this.#o.clock.now();
      while (this.#state !== 'ok' && !this.#stop.signal.aborted) {
        try {
          await this.#o.clock.sleep(Math.min(this.#o.intervalMs, KEY_FILE_REREAD_MS), this.#stop.signal);
        } catch {
          return;
        }
        if (this.#o.clock.now() - checkedAt < this.#o.intervalMs && !(await this.#holdsUntriedKey())) continue;
        checkedAt = this.#o.clock.now();
        await this.#checkOnce();
      }
    })().finally(() => {
      this.#checking = null;
    });
  }
}
