/**
 * `files retry <id>`: asks whether a daemon answers, lets src/ingest/operations/file-retry.ts retry the file, says what happened.
 *
 * Exit codes (src/ingest/file/file-verdict.ts): 0 the failed file is back in its inbox, or the resumed file is done with
 * every row accepted (or was a duplicate); 3 resumed and done with some rows rejected; 4 resumed and failed; 1
 * resumed and deferred again; 2 refused, nothing changed (unknown id, done, duplicate, a daemon owns processing/, the
 * source is gone, the name is taken).
 */
import type { Config } from '../../config/index.ts';
import { EXIT_OK } from './exit-codes.ts';
import { retryFile as retry, type DaemonPresence } from '../../ingest/operations/file-retry.ts';
import { exitCodeOfResult } from './exit-table.ts';
import type { FileResult } from '../../ingest/file/push-file.ts';
import { checkDaemon, type DaemonCheck } from '../../status/daemon-probe.ts';
import { resumedText } from './files-text.ts';

function presence(daemon: DaemonCheck): DaemonPresence {
  const state = daemon.state === 'ready' || daemon.state === 'not_ready' ? 'answers' : daemon.state === 'not_running' ? 'absent' : 'unknown';
  return { state, url: daemon.url, reasons: daemon.reasons };
}

function resultJson(result: FileResult): Record<string, unknown> {
  if (result.outcome === 'refused' || result.outcome === 'vanished') return { outcome: result.outcome, path: result.path };
  const f = result.file;
  const base = { outcome: result.outcome, id: f.id, status: f.status, rows_read: f.rows_read, rows_accepted: f.rows_accepted, rows_rejected: f.rows_rejected };
  if (result.outcome === 'deferred') return { ...base, error: result.error, retry_at: result.retryAt };
  if (result.outcome === 'held') return { ...base, held_path: result.heldPath, preview: result.previewPath, brakes: result.brakes };
  const error = f.error_code === null ? null : { code: f.error_code, message: f.error_message ?? '' };
  return { ...base, final_path: f.final_path, report: result.reportPath, rejects: result.rejectsPath, error };
}

export async function retryFile(config: Config, id: number, json: boolean): Promise<number> {
  const daemon = await checkDaemon(config);
  const outcome = await retry(config, id, presence(daemon), (text) => process.stderr.write(`note: ${text}\n`));
  if (outcome.action === 'requeued') {
    const { file, from, to } = outcome;
    const next =
      daemon.state === 'ready' || daemon.state === 'not_ready'
        ? 'the daemon claims it as a new file (with a new id)'
        : `no daemon answers, so it waits there; start the daemon, or push it now: pricing-agent push ${shellQuoted(to)} --source ${file.source}`;
    if (json) process.stdout.write(`${JSON.stringify({ id, action: 'requeued', from, to, daemon: daemon.state })}\n`);
    else process.stdout.write(`#${id} ${file.original_name}: moved back to ${to}\n  ${next}\n`);
    return EXIT_OK;
  }
  if (json) process.stdout.write(`${JSON.stringify({ id, action: 'resumed', ...resultJson(outcome.result) })}\n`);
  else process.stdout.write(resumedText(outcome.result));
  return exitCodeOfResult(outcome.result);
}

/** `text` as one word for a POSIX shell, pasted as it is: in single quotes, where nothing is expanded. */
function shellQuoted(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
