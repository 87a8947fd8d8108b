/**
 * Errors of the state database. Callers (the pull, the CLI, the daemon) branch on `code`, never on the message.
 */
import { mkdirSync } from 'node:fs';

export const STORE_ERROR_CODES = [
  /** The file could not be opened or is not a database this agent can use. */
  'OPEN_FAILED',
  /** A pragma did not take effect (e.g. WAL refused on a network filesystem). */
  'PRAGMA_NOT_EFFECTIVE',
  /** A migration failed; the database is left at the last migration that committed. */
  'MIGRATION_FAILED',
  /** A read-only open found no state at all: the agent has not run with this configuration yet. */
  'MISSING',
  /** A read-only open found a database that was never migrated by the agent. */
  'NOT_INITIALIZED',
  /** The state was migrated by a newer agent (a migration this build does not know): refused, never used. */
  'STATE_TOO_NEW',
  /** A write was started while another transaction is open on the same connection. */
  'TRANSACTION_OPEN',
  /** A write was attempted through a read-only handle. */
  'READ_ONLY',
  /** A delivery intent is already pending for this pull job: replay it before recording a new one. */
  'INTENT_PENDING',
  /** The delivery intent does not exist or is already done. */
  'INTENT_NOT_PENDING',
  /** recordWithdrawal was given a version without cancelled_at. */
  'NOT_CANCELLED',
  /** A mirror row lacks the key it is stored under. */
  'MIRROR_KEY_MISSING',
  /** A stream name that is not a known mirror stream. */
  'UNKNOWN_STREAM',
  /** A consumer offset beyond the last seq of the feed. */
  'SEQ_BEYOND_FEED',
  /** A consumer offset that would move backwards (allowed only when forced). */
  'OFFSET_BACKWARDS',
  /** A state copy found rows in the target: it copies only into an empty schema. */
  'TARGET_NOT_EMPTY',
  /** The two sides of a state copy have different tables or columns (different agent versions). */
  'SCHEMA_MISMATCH',
  /** A write of an HA node whose lease ended (another node is active): refused, nothing committed. */
  'FENCED',
  /** Bad argument (negative seq, empty name, invalid date). */
  'INVALID_ARGUMENT',
  /** PostgreSQL's pg_dump or pg_restore (state backup, state restore) ended with an error. */
  'TOOL_FAILED',
  /** Another daemon holds the state's lock (store/state-lock.ts). */
  'IN_USE',
] as const;
export type StoreErrorCode = (typeof STORE_ERROR_CODES)[number];

export class StoreError extends Error {
  override readonly name = 'StoreError';
  readonly code: StoreErrorCode;

  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** What to do about a state.dir that could not be made, by the system's error code. */
const STATE_DIR_HINTS: Readonly<Record<string, string>> = {
  EEXIST: 'a file is in the way: set state.dir to a folder',
  ENOTDIR: 'a file is in the way: set state.dir to a folder',
  EACCES: "the agent's user may not create it: create it for that user (chown), or run as that user",
  EPERM: "the agent's user may not create it: create it for that user (chown), or run as that user",
  EROFS: 'the file system is read-only: set state.dir to a writable folder',
};

/**
 * Makes state.dir (and its parents) if needed; a folder it cannot be is one sentence naming the setting and what to
 * do, not Node's `EEXIST: file already exists, mkdir ...`.
 */
export function makeStateDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o750 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    const hint = STATE_DIR_HINTS[code] ?? 'set state.dir to a folder the agent can write';
    throw new StoreError('OPEN_FAILED', `state.dir ${dir} cannot be used (${code}): ${hint}`, { cause: error });
  }
}
