/**
 * Whether the state directory can take work: writable (a real write, since access() passes on a file system the
 * kernel made read-only after an error) and with room to checkpoint. The daemon reports the problem in /readyz
 * and holds every new file and pull at `waitUntilUsable` while it lasts (found by the resource-fault tests: with
 * the state disk full or read-only the agent kept claiming files and starting pulls it could not record).
 */
import { accessSync, constants, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../clock.ts';
import type { Logger } from '../log.ts';

/** Below this much free space in the state directory the agent is not ready (it cannot checkpoint safely). */
export const MIN_FREE_STATE_BYTES = 64 * 1024 * 1024; // 64 MiB

/** Rewritten (empty) by every check: proves the state directory takes writes. */
export const WRITE_CHECK_FILE = '.write-check';

/** How often a waiting worker checks whether the state directory is usable again. */
const CHECK_INTERVAL_MS = 1_000; // 1 s

export class StateDirGuard {
  readonly #dir: () => string;
  readonly #dbPath: () => string | null;
  readonly #clock: Clock;
  readonly #logger: Logger;
  #down = false; // logged once per episode

  constructor(options: { dir: () => string; dbPath: () => string | null; clock: Clock; logger: Logger }) {
    this.#dir = options.dir;
    this.#dbPath = options.dbPath;
    this.#clock = options.clock;
    this.#logger = options.logger;
  }

  /** Why the state directory cannot take work now, or null. */
  problem(): string | null {
    const dir = this.#dir();
    try {
      accessSync(dir, constants.W_OK);
      const db = this.#dbPath();
      if (db !== null) accessSync(db, constants.W_OK);
      writeFileSync(join(dir, WRITE_CHECK_FILE), '', { mode: 0o640 });
      const fs = statfsSync(dir);
      if (fs.bavail * fs.bsize < MIN_FREE_STATE_BYTES) return `the state directory ${dir} is almost full (less than 64 MiB free)`;
      return null;
    } catch {
      return `the state directory ${dir} is not writable`;
    }
  }

  /** Resolves once the state directory is usable; says so in the log once when it is not. Rejects on abort. */
  async waitUntilUsable(signal: AbortSignal): Promise<void> {
    let problem = this.problem();
    if (problem !== null && !this.#down) {
      this.#down = true;
      this.#logger.error({ state_dir: this.#dir(), problem }, 'state directory unusable: no new file or pull starts until it is fixed; nothing is lost');
    }
    while (problem !== null) {
      await this.#clock.sleep(CHECK_INTERVAL_MS, signal);
      problem = this.problem();
    }
    if (this.#down) {
      this.#down = false;
      this.#logger.info({ state_dir: this.#dir() }, 'the state directory is usable again; taking work');
    }
  }
}
