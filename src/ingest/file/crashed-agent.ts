/**
 * Poison files (issue 27, point 5): a file that kills the agent (a workbook bomb, a parser bug, the out-of-memory
 * killer) stays in processing/ and is resumed first at every start, so under systemd one file becomes a crash loop
 * that takes pulls and the feed down with it. The ledger marks each attempt on a file before its work begins
 * (push-ledger.ts openAttempt); a mark still there at the next attempt is a death. After two deaths in a row with no
 * progress in between, the file is not resumed a third time: it goes to failed/ with CRASHED_AGENT. This catches the
 * bombs nobody has thought of yet, whatever killed the process.
 *
 * What counts as a death: anything that ends the process without the attempt returning (SIGKILL, an abort, a second
 * Ctrl-C of `push`). A drain (SIGTERM, the first Ctrl-C), a deferral or a finished file close the attempt.
 */
import type { PushFile } from '../../store/push-ledger.ts';

export const CRASHED_AGENT_CODE = 'CRASHED_AGENT';

/** Deaths in a row, without progress in between, after which a file is set aside instead of resumed. */
export const DEATHS_BEFORE_SET_ASIDE = 2;

/** The report's error for a file set aside after `crashes` deaths: what happened, the last error known, what to do. */
export function crashedAgentError(file: PushFile, crashes: number): { code: string; message: string } {
  const last = file.error_code === null ? '' : ` (last error recorded: ${file.error_code}: ${file.error_message ?? ''})`;
  return {
    code: CRASHED_AGENT_CODE,
    message:
      `the agent died ${crashes} times in a row while this file was in progress, so it was set aside instead of resumed again${last}; ` +
      `look at the file and the agent's log, then send it again with: pricing-agent files retry ${file.id}`,
  };
}
