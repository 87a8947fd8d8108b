/**
 * Watches one inbox folder and hands over each data file once it is complete: stable (size and mtime unchanged
 * for `stableMs` by the agent's clock) or marked done. Files present at start-up go through the same check
 * (chokidar reports them at once without any write-finish wait, so `ignoreInitial` and our own listing instead).
 *
 * Correctness does not depend on change events: every check re-stats the file, so a missed event only delays a
 * file, never hands over a half-written one, and the folder is listed again every `rescanIntervalMs` (60 s by
 * default) whatever the events said, so a file no event announced is still seen. chokidar has lost one under load:
 * a file written under the name of one just claimed (renamed away) in the same instant. Events only make the first
 * check happen sooner.
 *
 * A folder that disappears (an unmounted share, a deleted directory) is waited for and watched again when it comes
 * back; nothing else is affected.
 */
import { existsSync, statSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { Clock } from '../../clock.ts';
import type { Logger } from '../../log.ts';
import { StabilityTracker } from './stability.ts';
import { isDataFile, markedFile, type NameRules } from './file-name-rules.ts';

export interface InboxWatcherOptions {
  /** Absolute path of the inbox folder; sub-folders (processing, archive, failed) are not watched. */
  readonly dir: string;
  readonly rules: NameRules;
  readonly stableMs: number;
  /** Poll instead of OS notifications: SMB/NFS shares deliver no change events. */
  readonly poll: boolean;
  readonly pollIntervalMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Called once per complete file (absolute path), until the file leaves the folder or is released. */
  readonly onReady: (file: string) => void;
  /** How often to look for a missing folder again. */
  readonly rewatchIntervalMs?: number;
  /** How often to list the folder whatever the events say (the safety net for a lost event). */
  readonly rescanIntervalMs?: number;
}

export type WatcherState = 'starting' | 'watching' | 'missing' | 'closed';

export const DEFAULT_REWATCH_INTERVAL_MS = 10_000; // 10 s
export const DEFAULT_RESCAN_INTERVAL_MS = 60_000; // 1 min: a lost event delays a file by at most this much

export class InboxWatcher {
  readonly #o: InboxWatcherOptions;
  readonly #tracker: StabilityTracker;
  readonly #checks = new Map<string, AbortController>();
  /** Files handed over, with their inode: a new file under the same name is another file (see #stillHandedOver). */
  readonly #handedOver = new Map<string, number | null>();
  readonly #closing = new AbortController();
  #watcher: FSWatcher | null = null;
  #state: WatcherState = 'starting';
  #rescanning = false;

  constructor(options: InboxWatcherOptions) {
    this.#o = options;
    this.#tracker = new StabilityTracker(options.stableMs);
  }

  get state(): WatcherState {
    return this.#state;
  }

  /** Files seen and waiting to become stable (for status output and tests). */
  get waiting(): string[] {
    return this.#tracker.tracked;
  }

  /** Starts watching; when the folder is missing, keeps looking for it in the background. */
  async start(): Promise<void> {
    if (this.#state === 'closed') return;
    if (!isFolder(this.#o.dir)) {
      this.#folderMissing();
      return;
    }
    const watcher = watch(this.#o.dir, {
      ignoreInitial: true,
      depth: 0,
      persistent: true,
      followSymlinks: false,
      usePolling: this.#o.poll,
      interval: this.#o.pollIntervalMs,
      binaryInterval: this.#o.pollIntervalMs,
      // Sub-folders are the agent's own (processing, archive, failed): never watched.
      ignored: (path, stats) => path !== this.#o.dir && stats?.isDirectory() === true,
    });
    this.#watcher = watcher;
    watcher.on('add', (path) => void this.#consider(path));
    watcher.on('change', (path) => void this.#consider(path));
    watcher.on('unlink', (path) => this.#gone(path));
    watcher.on('unlinkDir', (path) => {
      if (path === this.#o.dir) void this.#restart();
    });
    // Removing the watched folder itself produces no unlinkDir (chokidar 5), only a raw 'rename' on the root.
    watcher.on('raw', (_event, _path, details) => {
      const watchedPath = (details as { watchedPath?: unknown } | undefined)?.watchedPath;
      if (watchedPath === this.#o.dir && !existsSync(this.#o.dir)) void this.#restart();
    });
    // Without an error handler an EMFILE or a vanished share would crash the process (library notes, chokidar).
    watcher.on('error', (error) => {
      this.#o.logger.warn({ inbox: this.#o.dir, error: String(error) }, 'inbox watcher error');
      if (!existsSync(this.#o.dir)) void this.#restart();
    });
    // Closed before chokidar is ready (an HA node stepping down, or the agent stopping, while it starts): chokidar
    // never says 'ready' then, and a start that waited for it held the drain until its timeout.
    const closing = this.#closing.signal;
    await new Promise<void>((resolve) => {
      watcher.once('ready', resolve);
      closing.addEventListener('abort', () => resolve(), { once: true });
    });
    if (closing.aborted) return;
    this.#state = 'watching';
    await this.rescan();
    this.#keepRescanning();
  }

  /** Lists the folder and considers every entry; used at start, after the folder comes back, and by the safety net. */
  async rescan(): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.#o.dir);
    } catch {
      return;
    }
    await Promise.all(names.map((name) => this.#consider(join(this.#o.dir, name))));
  }

  /** Hands a file back: it will be considered again (e.g. its claim was deferred). */
  release(file: string): void {
    this.#handedOver.delete(file);
    void this.#consider(file);
  }

  async close(): Promise<void> {
    this.#state = 'closed';
    this.#closing.abort();
    for (const check of this.#checks.values()) check.abort();
    this.#checks.clear();
    await this.#watcher?.close();
    this.#watcher = null;
  }

  /**
   * Lists the folder every rescan interval until close(); one loop for the watcher's life, across restarts. A data
   * file it finds that no event announced is logged at debug: the safety net caught a lost event.
   */
  #keepRescanning(): void {
    if (this.#rescanning) return;
    this.#rescanning = true;
    const interval = this.#o.rescanIntervalMs ?? DEFAULT_RESCAN_INTERVAL_MS;
    const loop = async (): Promise<void> => {
      for (;;) {
        await this.#o.clock.sleep(interval, this.#closing.signal);
        if (this.#state !== 'watching') continue;
        const known = new Set([...this.#tracker.tracked, ...this.#handedOver.keys()]);
        const before = await readdir(this.#o.dir).catch(() => [] as string[]);
        const unannounced = before.filter((name) => isDataFile(name, this.#o.rules) && !known.has(join(this.#o.dir, name)));
        if (unannounced.length > 0) this.#o.logger.debug({ inbox: this.#o.dir, files: unannounced }, 'inbox rescan found files no event announced');
        await this.rescan();
      }
    };
    loop().catch(() => undefined); // aborted by close()
  }

  async #consider(path: string): Promise<void> {
    if (this.#state === 'closed') return;
    const name = basename(path);
    const target = markedFile(name, this.#o.rules);
    if (target !== null) {
      const file = join(this.#o.dir, target);
      if (isDataFile(target, this.#o.rules) && !(await this.#stillHandedOver(file)) && (await markerCompletes(file, path))) this.#handOver(file);
      return;
    }
    if (!isDataFile(name, this.#o.rules) || (await this.#stillHandedOver(path))) return;
    if (this.#o.rules.doneMarker !== null && (await markerCompletes(path, path + this.#o.rules.doneMarker))) {
      this.#handOver(path);
      return;
    }
    const shape = await statFile(path);
    if (shape === null) {
      this.#gone(path);
      return;
    }
    this.#scheduleCheck(path, this.#tracker.observe(path, shape, this.#o.clock.now()));
  }

  #scheduleCheck(path: string, at: number): void {
    this.#checks.get(path)?.abort();
    const controller = new AbortController();
    this.#checks.set(path, controller);
    this.#o.clock.sleep(at - this.#o.clock.now(), controller.signal).then(
      () => this.#check(path, controller),
      () => undefined, // aborted: a newer check or close() replaced this one
    );
  }

  async #check(path: string, controller: AbortController): Promise<void> {
    if (this.#checks.get(path) !== controller || this.#state === 'closed') return;
    this.#checks.delete(path);
    const shape = await statFile(path);
    if (shape === null) {
      this.#gone(path);
      return;
    }
    const now = this.#o.clock.now();
    if (this.#tracker.isStable(path, shape, now)) this.#handOver(path);
    else this.#scheduleCheck(path, this.#tracker.observe(path, shape, now));
  }

  /**
   * Whether `path` is the file already handed over. chokidar reports a file deleted and created again within
   * 100 ms (its `atomic` option) as a "change", not as unlink + add: an export written under the same name right
   * after the agent claimed the previous one was never picked up (found by the security tests). The inode tells.
   */
  async #stillHandedOver(path: string): Promise<boolean> {
    if (!this.#handedOver.has(path)) return false;
    const known = this.#handedOver.get(path);
    const ino = await stat(path).then((s) => s.ino, () => null);
    if (ino === null || known === null || ino === known) return true;
    this.#handedOver.delete(path);
    return false;
  }

  #handOver(path: string): void {
    if (this.#handedOver.has(path)) return;
    this.#handedOver.set(path, statSync(path, { throwIfNoEntry: false })?.ino ?? null);
    this.#checks.get(path)?.abort();
    this.#checks.delete(path);
    this.#tracker.forget(path);
    this.#o.onReady(path);
  }

  #gone(path: string): void {
    this.#handedOver.delete(path);
    this.#tracker.forget(path);
    this.#checks.get(path)?.abort();
    this.#checks.delete(path);
  }

  async #restart(): Promise<void> {
    if (this.#state === 'closed' || this.#state === 'missing') return;
    await this.#watcher?.close();
    this.#watcher = null;
    this.#folderMissing();
  }

  /** Logs once, then looks for the folder every rewatch interval until it is back. */
  #folderMissing(): void {
    this.#state = 'missing';
    // A file where the folder should be is a missing folder too: nothing would ever be picked up from it.
    this.#o.logger.warn({ inbox: this.#o.dir }, 'inbox folder is missing; waiting for it to come back');
    const interval = this.#o.rewatchIntervalMs ?? DEFAULT_REWATCH_INTERVAL_MS;
    const retry = async (): Promise<void> => {
      while (!isFolder(this.#o.dir)) await this.#o.clock.sleep(interval, this.#closing.signal);
      this.#o.logger.info({ inbox: this.#o.dir }, 'inbox folder is back; watching it again');
      this.#state = 'starting';
      await this.start();
    };
    retry().catch(() => undefined); // aborted by close()
  }
}

/**
 * A marker completes a file only if it was written after the file's last change: a marker left over from an earlier
 * file of the same name must not hand over a new one that is still being written.
 */
async function markerCompletes(file: string, marker: string): Promise<boolean> {
  try {
    const [data, mark] = await Promise.all([stat(file), stat(marker)]);
    return data.isFile() && mark.mtimeMs >= data.mtimeMs;
  } catch {
    return false;
  }
}

async function statFile(path: string): Promise<{ size: number; mtimeMs: number } | null> {
  try {
    const s = await stat(path);
    return s.isFile() ? { size: s.size, mtimeMs: s.mtimeMs } : null;
  } catch {
    return null;
  }
}

/** Whether a folder (not a file, not nothing) is at `path`. */
function isFolder(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
}
