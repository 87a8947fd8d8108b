/**
 * What a file's outcome means for the person or script that asked for it, in one word, and the exit code each
 * command gives for it (`push`, `push --dry-run`, `files retry`):
 *
 * - accepted: every row the file holds is on the platform (or nothing to do: the same content was already sent);
 * - rows_rejected: the file was sent, but some rows were rejected (locally or by the API);
 * - not_finished: the file failed, was refused or vanished, or is deferred in processing/ (the same command resumes
 *   it).
 */
import { EXIT_FAILURE, EXIT_OK, EXIT_ROWS_REJECTED } from '../exit-codes.ts';
import type { DryRunResult } from './dry-run.ts';
import type { FileResult } from './push-file.ts';

export type FileVerdict = 'accepted' | 'rows_rejected' | 'not_finished';

export function verdictOf(result: FileResult): FileVerdict {
  switch (result.outcome) {
    case 'done':
      return (result.file.rows_rejected ?? 0) > 0 ? 'rows_rejected' : 'accepted';
    case 'duplicate':
      return 'accepted';
    default:
      return 'not_finished';
  }
}

/** What a push of the file would be (a file that would fail as a whole throws before there is a result). */
export function dryRunVerdict(result: DryRunResult): FileVerdict {
  // A file the brakes would hold would not be sent: as a push of it would end.
  if ((result.delta?.tripped.length ?? 0) > 0) return 'not_finished';
  return result.summary.rejected > 0 ? 'rows_rejected' : 'accepted';
}

const EXIT_CODES: Readonly<Record<FileVerdict, number>> = {
  accepted: EXIT_OK,
  rows_rejected: EXIT_ROWS_REJECTED,
  not_finished: EXIT_FAILURE,
};

export function exitCodeOf(verdict: FileVerdict): number {
  return EXIT_CODES[verdict];
}

export function exitCodeOfResult(result: FileResult): number {
  return exitCodeOf(verdictOf(result));
}
