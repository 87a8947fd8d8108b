/**
 * Carries out `files retry <id>` (what a retry means per status: src/status/file-retry.ts) and says what happened.
 *
 * Exit codes: 0 the failed file is back in its inbox, or the resumed file is done with every row accepted (or was a
 * duplicate); 3 resumed and done with some rows rejected; 1 resumed and failed or deferred again; 2 refused,
 * nothing changed (unknown id, done, duplicate, a daemon owns processing/, the source is gone, the name is taken).
 */
import { connectApi } from '../api-from-config.ts';
import { systemClock } from '../clock.ts';
import type { Config } from '../config/index.ts';
import { processClaimed, type FileResult } from '../ingest/push-file.ts';
import { createLogger } from '../log.ts';
import { checkDaemon } from '../status/daemon-probe.ts';
import { planRetry, requeueFile, RetryRefusedError } from '../status/file-retry.ts';
import { databasePath, openDatabase } from '../store/open-database.ts';
import { getFile, type PushFile } from '../store/push-ledger.ts';
import { resumedText } from './files-text.ts';

export const EXIT_ROWS_REJECTED = 3;

async function readFileRow(config: Config, id: number): Promise<PushFile> {
  const db = await openDatabase(databasePath(config.state.dir), { readonly: true }).catch((error: unknown) => {
    throw new RetryRefusedError('RETRY_NO_DATABASE', `cannot read the state database: ${(error as Error).message}`);
  });
  try {
    const file = getFile(db, id);
    if (!file) throw new RetryRefusedError('RETRY_UNKNOWN_ID', `no file with id ${id} in the ledger (see pricing-agent files list)`);
    return file;
  } finally {
    await db.close();
  }
}

function exitCodeOf(result: FileResult): number {
  if (result.outcome === 'duplicate') return 0;
  if (result.outcome === 'done') return (result.file.rows_rejected ?? 0) > 0 ? EXIT_ROWS_REJECTED : 0;
  return 1;
}

function resultJson(result: FileResult): Record<string, unknown> {
  if (result.outcome === 'refused' || result.outcome === 'vanished') return { outcome: result.outcome, path: result.path };
  const f = result.file;
  const base = { outcome: result.outcome, id: f.id, status: f.status, rows_read: f.rows_read, rows_accepted: f.rows_accepted, rows_rejected: f.rows_rejected };
  if (result.outcome === 'deferred') return { ...base, error: result.error, retry_at: result.retryAt };
  const error = f.error_code === null ? null : { code: f.error_code, message: f.error_message ?? '' };
  return { ...base, final_path: f.final_path, report: result.reportPath, rejects: result.rejectsPath, error };
}

async function resume(config: Config, file: PushFile, source: Parameters<typeof processClaimed>[1]): Promise<FileResult> {
  const debug = config.log.level === 'debug' || config.log.level === 'trace';
  const logger = createLogger({ level: debug ? config.log.level : 'fatal', destination: 2 });
  const api = connectApi(config.api, logger);
  const db = await openDatabase(databasePath(config.state.dir));
  try {
    return await processClaimed({ db, client: api.client, clock: systemClock, logger, maxInFlight: config.api.max_connections }, source, file.id);
  } finally {
    await api.close();
    await db.close();
  }
}

export async function retryFile(config: Config, id: number, json: boolean): Promise<number> {
  const file = await readFileRow(config, id);
  const plan = await planRetry(config, file);
  const daemon = await checkDaemon(config);
  const daemonAnswers = daemon.state === 'ready' || daemon.state === 'not_ready';
  if (plan.kind === 'requeue') {
    await requeueFile(plan.from, plan.to);
    const next = daemonAnswers
      ? 'the daemon claims it as a new file (with a new id)'
      : `no daemon answers, so it waits there; start the daemon, or push it now: pricing-agent push ${JSON.stringify(plan.to)} --source ${file.source}`;
    if (json) process.stdout.write(`${JSON.stringify({ id, action: 'requeued', from: plan.from, to: plan.to, daemon: daemon.state })}\n`);
    else process.stdout.write(`#${id} ${file.original_name}: moved back to ${plan.to}\n  ${next}\n`);
    return 0;
  }
  if (daemonAnswers) {
    throw new RetryRefusedError(
      'RETRY_DAEMON_RUNNING',
      `a daemon answers on ${daemon.url ?? 'the configured address'}: it owns the files in processing/ and retries #${id} itself` +
        `${file.next_attempt_at !== null ? ` at ${file.next_attempt_at}` : ''}. To retry at once, restart it (unfinished files are resumed first).`,
    );
  }
  if (daemon.state === 'disabled' || daemon.state === 'unknown') {
    process.stderr.write(`note: cannot tell whether a daemon runs (${daemon.reasons.join('; ')}); if one does, stop it first\n`);
  }
  const result = await resume(config, file, plan.source);
  if (json) process.stdout.write(`${JSON.stringify({ id, action: 'resumed', ...resultJson(result) })}\n`);
  else process.stdout.write(resumedText(result));
  return exitCodeOf(result);
}
