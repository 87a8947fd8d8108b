/**
 * Keeping the WAL small without ever blocking the event loop on a POS reader.
 *
 * A reader holding a read transaction (a POS in the middle of a query) stops a checkpoint from reaching the end
 * of the WAL, and `wal_checkpoint(TRUNCATE)` then waits for the whole busy_timeout inside a synchronous call
 * (library notes, [seen]). So: PASSIVE checkpoints on a timer (they never wait), the WAL size is observable, and
 * TRUNCATE runs only when the caller says the agent is idle (or at close), with busy_timeout 0 for that one call,
 * so that a reader makes it return at once with `busy` instead of stalling. Checkpoints never lose data: whatever
 * is not yet copied stays in the WAL and is replayed by the next open.
 */
import { statSync } from 'node:fs';
import type { MaintenanceOptions } from '../state-db.ts';
import type { SqliteDb } from './sqlite-db.ts';

export type CheckpointMode = 'PASSIVE' | 'TRUNCATE';

export interface CheckpointResult {
  mode: CheckpointMode;
  /** True when a reader or writer kept the checkpoint from finishing (it is retried on the next tick). */
  busy: boolean;
  /** Frames in the WAL, and how many of them are now in the database file (-1 when not in WAL mode). */
  logFrames: number;
  checkpointedFrames: number;
  /** Size of the -wal file after the checkpoint. */
  walBytes: number;
  at: string;
}

/** Size of the -wal file in bytes (0 when there is none). */
export function walSizeBytes(db: SqliteDb): number {
  try {
    return statSync(`${db.path}-wal`).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
}

/** One checkpoint. PASSIVE never waits for anybody; use `truncateWalIfFree` rather than TRUNCATE directly. */
export function checkpoint(db: SqliteDb, mode: CheckpointMode): CheckpointResult {
  const rows = db.sqlite.pragma(`wal_checkpoint(${mode})`) as { busy: number; log: number; checkpointed: number }[];
  const row = rows[0] ?? { busy: 1, log: -1, checkpointed: -1 };
  return {
    mode,
    busy: row.busy !== 0,
    logFrames: row.log,
    checkpointedFrames: row.checkpointed,
    walBytes: walSizeBytes(db),
    at: db.now(),
  };
}

/** TRUNCATE with busy_timeout 0: resets the WAL to zero bytes if nobody is reading it, else returns `busy` at once. */
export function truncateWalIfFree(db: SqliteDb): CheckpointResult {
  const previous = db.sqlite.pragma('busy_timeout', { simple: true }) as number;
  db.sqlite.pragma('busy_timeout = 0');
  try {
    return checkpoint(db, 'TRUNCATE');
  } finally {
    db.sqlite.pragma(`busy_timeout = ${previous}`);
  }
}

export interface WalMaintenanceOptions extends MaintenanceOptions {
  /** Period of the PASSIVE checkpoint. */
  intervalMs?: number;
  /** Above this WAL size, an idle tick tries TRUNCATE. Without `isIdle`, TRUNCATE runs only at close. */
  truncateAboveBytes?: number;
  /** Called after every tick, e.g. to export `walBytes` as a metric or log a `busy` streak. */
  onCheckpoint?: (result: CheckpointResult) => void;
}

const DEFAULTS = {
  intervalMs: 60 * 1000, // 60 s
  truncateAboveBytes: 16 * 1024 * 1024, // 16 MiB
};

/** The timer. `tick()` is public so that tests and the daemon's drain can run one now. */
export class WalMaintenance {
  readonly #db: SqliteDb;
  readonly #options: Required<Omit<WalMaintenanceOptions, 'onCheckpoint' | 'onError'>> &
    Pick<WalMaintenanceOptions, 'onCheckpoint' | 'onError'>;
  #timer: NodeJS.Timeout | undefined;
  #last: CheckpointResult | undefined;
  #unhook: (() => void) | undefined;

  constructor(db: SqliteDb, options: WalMaintenanceOptions = {}) {
    this.#db = db;
    this.#options = {
      intervalMs: options.intervalMs ?? DEFAULTS.intervalMs,
      truncateAboveBytes: options.truncateAboveBytes ?? DEFAULTS.truncateAboveBytes,
      isIdle: options.isIdle ?? (() => false),
      onCheckpoint: options.onCheckpoint,
      onError: options.onError,
    };
  }

  start(): this {
    if (this.#timer) return this;
    // A checkpoint that throws (disk I/O error on a failing or read-only disk) must not escape the timer: that
    // crashed the daemon a minute into a read-only state disk (found by the resource-fault tests).
    this.#timer = setInterval(() => {
      try {
        this.tick();
      } catch (error) {
        this.#options.onError?.(error);
      }
    }, this.#options.intervalMs);
    this.#timer.unref(); // never keeps the process alive on its own
    this.#unhook = this.#db.onClose(() => this.stop());
    return this;
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#unhook?.();
    this.#unhook = undefined;
  }

  /** One PASSIVE checkpoint, then TRUNCATE if idle and the WAL is above the threshold. */
  tick(): CheckpointResult | undefined {
    // Never between the statements of a transaction in flight (its fn may await between them).
    if (this.#db.closed || this.#db.readonly || this.#db.sqlite.inTransaction) return undefined;
    let result = checkpoint(this.#db, 'PASSIVE');
    if (result.walBytes > this.#options.truncateAboveBytes && this.#options.isIdle()) {
      result = truncateWalIfFree(this.#db);
    }
    this.#last = result;
    this.#options.onCheckpoint?.(result);
    return result;
  }

  /** The last tick's result: WAL size and whether readers are holding checkpoints back. */
  get last(): CheckpointResult | undefined {
    return this.#last;
  }
}
