/**
 * What a file's outcome means for the person or script that asked for it, in one word (the exit code each command
 * gives for it, `push`, `push --dry-run`, `files retry`, is cli/commands/exit-table.ts's, in brackets):
 *
 * - accepted (0): every row the file holds is on the platform (or nothing to do: the same content was already sent);
 * - rows_rejected (3): the file was sent, but some rows were rejected (locally or by the API);
 * - failed (4): the file is in failed/ with its report: none of its rows accepted, more rejected than
 *   reject_threshold, or the file itself broken (unreadable, unclosed quote, failed import job); or it was refused;
 * - not_finished (1): it is deferred in processing/ (API down, key rejected, interrupted: the same command resumes
 *   it), or it vanished.
 */
import type { DryRunResult } from '../operations/dry-run.ts';
import type { FileResult } from './push-file.ts';

export type FileVerdict = 'accepted' | 'rows_rejected' | 'failed' | 'not_finished';

export function verdictOf(result: FileResult): FileVerdict {
  switch (result.outcome) {
    case 'done':
      return (result.file.rows_rejected ?? 0) > 0 ? 'rows_rejected' : 'accepted';
    case 'duplicate':
      return 'accepted';
    case 'failed':
    case 'refused':
      return 'failed';
    default:
      return 'not_finished';
  }
}

/** What a push of the file would be (a file that would fail as a whole throws before there is a result). */
export function dryRunVerdict(result: DryRunResult): FileVerdict {
  // A file the brakes would hold would not be sent: as a push of it would end.
  if ((result.delta?.tripped.length ?? 0) > 0) return 'not_finished';
  if (result.failure !== null) return 'failed';
  return result.rejected > 0 ? 'rows_rejected' : 'accepted';
}
