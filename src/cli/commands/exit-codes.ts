/**
 * The exit codes of every command, named once. Only cli/ speaks in exit codes: a command returns one of these, or
 * throws, and errors.ts turns the error into one (a ConfigError or a UsageError: EXIT_CONFIG; anything else:
 * EXIT_FAILURE). The table of what each command's codes mean is exit-table.ts.
 */

/** Success: everything the command was asked to do is done. */
export const EXIT_OK = 0;
/** Failure: the command could not do its job, or not now (a push that waits in processing/ to be resumed). */
export const EXIT_FAILURE = 1;
/** A configuration or usage mistake, found before anything was touched. */
export const EXIT_CONFIG = 2;
/** A file was sent, but some of its rows were rejected (see its rejects CSV). */
export const EXIT_ROWS_REJECTED = 3;
/** A file failed: it is in failed/ with its report (nothing accepted, too many rows rejected, unreadable, ...). */
export const EXIT_FILE_FAILED = 4;
