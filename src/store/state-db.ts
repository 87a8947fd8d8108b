/**
 * The handle on the agent's state, as the rest of the agent sees it: opened by `openStateDb` (open-state-db.ts),
 * passed to the functions of each table family (push-ledger.ts, approved-prices.ts, ...), closed at the end. It has
 * no query methods: SQL lives in src/store/ only, and nothing above store/ knows which backend holds the state.
 *
 * Every function of a table family is asynchronous and does its writes in one transaction (all of it commits or
 * none of it does); which function commits what, and what survives a crash, is written at the function.
 */

/** Housekeeping a long-running process starts once (the daemon): SQLite's WAL checkpoints; nothing elsewhere. */
export interface MaintenanceOptions {
  /** Whether the agent is idle now (no pull or push in flight): heavier housekeeping waits for that. */
  isIdle?: () => boolean;
  /** A housekeeping tick failed (disk error, read-only file system); tried again at the next tick. */
  onError?: (error: unknown) => void;
}

export interface StateDb {
  /** Where the state lives, for messages: a file path, or the PostgreSQL host, database and schema (no password). */
  readonly location: string;
  /** The database file on this machine, when the state is one (its disk is watched for free space); else null. */
  readonly localFile: string | null;
  readonly readonly: boolean;
  readonly closed: boolean;
  /** The injected clock as an ISO 8601 UTC timestamp (the format of every *_at column the agent writes). */
  now(): string;
  /** Starts the backend's housekeeping until close; a second call does nothing. */
  startMaintenance(options?: MaintenanceOptions): void;
  /** Registers `hook` to run (once) when the handle is closed, e.g. to stop a timer. */
  onClose(hook: () => void): () => void;
  /** Waits for the transaction in flight, then closes. Everything committed stays committed. */
  close(): Promise<void>;
}
