/**
 * "Complete" by the agent's own clock: a file is stable when its size and mtime have not changed for `stableMs`,
 * measured with the injected Clock (not the file's mtime against wall time, which a share with a skewed clock or a
 * copy that preserves mtimes would fool). Writers that reserve the full size first (Windows copy) still update
 * mtime as they write, so size alone is not enough (library notes, chokidar).
 */
export interface FileShape {
  readonly size: number;
  readonly mtimeMs: number;
}

interface Observation extends FileShape {
  /** Clock time when this shape was first seen. */
  readonly since: number;
}

export class StabilityTracker {
  readonly #stableMs: number;
  readonly #seen = new Map<string, Observation>();

  constructor(stableMs: number) {
    this.#stableMs = stableMs;
  }

  /**
   * Records the current shape of `path` at clock time `now`; returns the clock time at which it will be stable if
   * nothing changes (a changed shape restarts the window).
   */
  observe(path: string, shape: FileShape, now: number): number {
    const previous = this.#seen.get(path);
    if (previous && previous.size === shape.size && previous.mtimeMs === shape.mtimeMs) {
      return previous.since + this.#stableMs;
    }
    this.#seen.set(path, { size: shape.size, mtimeMs: shape.mtimeMs, since: now });
    return now + this.#stableMs;
  }

  /** True when `shape` is what was observed and has not changed for the whole window. */
  isStable(path: string, shape: FileShape, now: number): boolean {
    const seen = this.#seen.get(path);
    return seen !== undefined && seen.size === shape.size && seen.mtimeMs === shape.mtimeMs && now - seen.since >= this.#stableMs;
  }

  forget(path: string): void {
    this.#seen.delete(path);
  }

  get tracked(): string[] {
    return [...this.#seen.keys()];
  }
}
