/**
 * The exit codes of every command, in one table: each command's `--help` prints its rows, docs/exit-codes.md holds
 * the same table (test/cli/exit-codes.test.ts compares them), and that test drives every command into every row.
 * A command that gains an outcome adds a row here first; the test then fails until the outcome is driven and the
 * doc says it.
 *
 * The numbers themselves are named once in exit-codes.ts; a file's verdict (push, retry, release) is decided by
 * src/ingest/file/file-verdict.ts and given its code here.
 */
import { verdictOf, type FileVerdict } from '../../ingest/file/file-verdict.ts';
import type { FileResult } from '../../ingest/file/push-file.ts';
import { EXIT_CONFIG, EXIT_FAILURE, EXIT_FILE_FAILED, EXIT_OK, EXIT_ROWS_REJECTED } from './exit-codes.ts';

export type ExitRow = readonly [code: number, meaning: string];

const CONFIG_MISTAKE: ExitRow = [EXIT_CONFIG, 'a configuration or usage mistake; nothing was touched'];

/** A file pushed now (push, files retry, files release): the verdicts of src/ingest/file/file-verdict.ts. */
const FILE_ROWS_REJECTED: ExitRow = [EXIT_ROWS_REJECTED, 'the file was sent, but some rows were rejected: see its rejects CSV'];
const FILE_FAILED: ExitRow = [EXIT_FILE_FAILED, 'the file failed: it is in failed/ with its report (unreadable, no row accepted, or more rejected than reject_threshold)'];

export const EXIT_TABLE = {
  'api clear-wait': [[EXIT_OK, 'the Retry-After window is ended (or there was none)'], CONFIG_MISTAKE],
  check: [
    [EXIT_OK, 'the key works (with --deep: nothing differs that the agent cannot work around)'],
    [EXIT_FAILURE, 'it does not: the API rejected the key, cannot be reached, or (--deep) differs; one sentence says which'],
    CONFIG_MISTAKE,
  ],
  'config validate': [
    [EXIT_OK, 'the configuration is valid'],
    [EXIT_CONFIG, 'it is not: every problem is listed with its line'],
  ],
  'config print': [[EXIT_OK, 'printed, secrets replaced by ***'], CONFIG_MISTAKE],
  demo: [
    [EXIT_OK, 'every check of the summary passed'],
    [EXIT_FAILURE, 'a check failed (see the summary) or the demo could not run'],
    [EXIT_CONFIG, '--dir is not empty, or cannot be made or written'],
  ],
  'exports cancel': [
    [EXIT_OK, 'the export is cancelled (or had ended): its status is printed'],
    [EXIT_FAILURE, 'the API refused (no such export) or could not be reached'],
    CONFIG_MISTAKE,
  ],
  'files list': [[EXIT_OK, 'listed'], CONFIG_MISTAKE],
  'files show': [[EXIT_OK, 'shown'], [EXIT_FAILURE, 'no file with this id'], CONFIG_MISTAKE],
  'files retry': [
    [EXIT_OK, 'a failed file is back in its inbox, or a resumed file is done with every row accepted'],
    [EXIT_FAILURE, 'resumed, and deferred again (it stays in processing/)'],
    [EXIT_CONFIG, 'refused, nothing changed (unknown id, done, a daemon owns processing/, ...) or a configuration mistake'],
    FILE_ROWS_REJECTED,
    FILE_FAILED,
  ],
  'files release': [
    [EXIT_OK, 'released (a running daemon sends it), or pushed now and done with every row accepted'],
    [EXIT_FAILURE, 'pushed now, and deferred (it stays in processing/)'],
    [EXIT_CONFIG, 'refused, nothing changed (no such held file, the name is taken in the inbox) or a configuration mistake'],
    FILE_ROWS_REJECTED,
    FILE_FAILED,
  ],
  'jobs show': [[EXIT_OK, 'the job is printed'], [EXIT_FAILURE, 'the API refused (no such job) or could not be reached'], CONFIG_MISTAKE],
  'outbox stats': [[EXIT_OK, 'shown'], [EXIT_FAILURE, 'there is no state database yet (the agent has not run with this state.dir)'], CONFIG_MISTAKE],
  'outbox consumers': [[EXIT_OK, 'shown'], [EXIT_FAILURE, 'there is no state database yet (the agent has not run with this state.dir)'], CONFIG_MISTAKE],
  'outbox ack': [[EXIT_OK, 'the offset is recorded'], [EXIT_CONFIG, 'a seq the feed has not reached, one behind the offset without --force, or a configuration mistake; nothing was recorded']],
  'outbox export': [
    [EXIT_OK, 'the files are written (or no feed row was left to write)'],
    [EXIT_FAILURE, 'a file could not be written (the message says which)'],
    [EXIT_CONFIG, 'no export folder (outbox.exports or --dir), --dir or --format other than those of outbox.exports, or a configuration mistake; nothing was written'],
  ],
  pull: [
    [EXIT_OK, 'done'],
    [EXIT_FAILURE, 'failed or interrupted: what was stored stays, and the next run continues'],
    CONFIG_MISTAKE,
  ],
  push: [
    [EXIT_OK, 'every row accepted, or the same content was already sent (nothing to do)'],
    [EXIT_FAILURE, 'not finished now (API down, key rejected, interrupted): it waits in processing/ and the same command resumes it; or the brakes held it (held/)'],
    [EXIT_CONFIG, 'a configuration or usage mistake (unknown source, its folder missing, no such file, a bad option); nothing was touched'],
    FILE_ROWS_REJECTED,
    FILE_FAILED,
  ],
  'push --dry-run': [
    [EXIT_OK, 'every row would be sent'],
    [EXIT_FAILURE, 'the brakes would hold the file'],
    CONFIG_MISTAKE,
    [EXIT_ROWS_REJECTED, 'some rows would be rejected: see the rejects CSV'],
    [EXIT_FILE_FAILED, 'the file would fail as a whole (unreadable, or too many rows rejected)'],
  ],
  run: [
    [EXIT_OK, 'stopped cleanly (SIGTERM or Ctrl-C, the drain finished)'],
    [EXIT_FAILURE, 'could not start (one sentence says why) or the drain timed out'],
    CONFIG_MISTAKE,
  ],
  sandbox: [[EXIT_OK, 'stopped (Ctrl-C)'], [EXIT_FAILURE, 'could not start (the port is taken)'], CONFIG_MISTAKE],
  'sources suggest': [
    [EXIT_OK, 'the draft is printed (with --preview: the rows as they would be sent and the counts of a dry run)'],
    [EXIT_FAILURE, 'the file cannot be read as a table (a broken workbook, a quote never closed)'],
    [EXIT_CONFIG, 'a usage mistake: no such file, a bad --set, or --preview while a field is still a placeholder'],
  ],
  'state backup': [
    [EXIT_OK, 'the copy is written'],
    [EXIT_FAILURE, 'no state yet, the file cannot be written, or (PostgreSQL) pg_dump failed or is not on PATH (the command to run is printed)'],
    CONFIG_MISTAKE,
  ],
  'state restore': [
    [EXIT_OK, 'restored'],
    [EXIT_FAILURE, 'refused (an agent runs, the file is not a pricing-agent state, a newer agent wrote it, or it is a dump of another schema; the state is left as it was), or pg_restore failed'],
    CONFIG_MISTAKE,
  ],
  'state migrate': [
    [EXIT_OK, 'copied'],
    [EXIT_FAILURE, 'refused or failed (a daemon runs, the target is not empty); the target is left as it was'],
    CONFIG_MISTAKE,
  ],
  status: [
    [EXIT_OK, 'shown, also when the API cannot be reached, no daemon runs or there is no database yet'],
    [EXIT_FAILURE, 'the API rejected the key (401), an inbox is refused (its folders are not the agent\'s own), or the daemon answered that it is not ready (the reasons are shown)'],
    CONFIG_MISTAKE,
  ],
} as const satisfies Record<string, readonly ExitRow[]>;

export type CommandName = keyof typeof EXIT_TABLE;

/** The `Exit codes:` paragraph of a command's --help, from the table. */
export function exitHelp(command: CommandName): string {
  const rows = [...EXIT_TABLE[command]].sort((a, b) => a[0] - b[0]);
  return `\nExit codes:\n${rows.map(([code, meaning]) => `  ${code}  ${meaning}`).join('\n')}`;
}

const VERDICT_CODES: Readonly<Record<FileVerdict, number>> = {
  accepted: EXIT_OK,
  rows_rejected: EXIT_ROWS_REJECTED,
  failed: EXIT_FILE_FAILED,
  not_finished: EXIT_FAILURE,
};

/** The exit code of a file's verdict (push, push --dry-run, files retry, files release). */
export function exitCodeOf(verdict: FileVerdict): number {
  return VERDICT_CODES[verdict];
}

export function exitCodeOfResult(result: FileResult): number {
  return exitCodeOf(verdictOf(result));
}
