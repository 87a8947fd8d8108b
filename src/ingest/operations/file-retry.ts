/**
 * `files retry <id>`: what a retry means depends on where the file is.
 *
 * - failed (in failed/): the file goes back into its source's inbox, under its original name, and is claimed again
 *   as new content by the daemon (or `push --source`). The duplicate check skips only content already *done*, so a
 *   failed file's content is sent again. Its ledger row stays as it was (the history of that attempt), and its old
 *   report stays in failed/ until the file fails again. Retrying helps when something outside the file changed
 *   (the config's encoding or mapping, the API); a file that is itself broken fails again: fix it first.
 * - in processing/ (deferred after an API failure, or left by a stopped agent): pushed now, once, in this process
 *   (processClaimed), from the first batch without a committed result; needs the API. Refused while a daemon
 *   answers on the configured address: that daemon owns processing/ and retries the file itself (restart it to
 *   retry at once: unfinished files are resumed first).
 * - done with no row accepted: like failed (it comes back from archive/), so a file archived as done before failures
 *   were told apart can be sent again;
 * - done or duplicate: refused; nothing needs a retry. Sending the same content again is `push --force`.
 *
 * Refusals change nothing and throw RetryRefusedError (exit 2).
 */
import { link, rename, stat, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ENTITIES, type Entity } from '../../api/schemas/index.ts';
import { fsyncDirectory } from '../../atomic-file.ts';
import type { Config } from '../../config/index.ts';
import { openStateDb } from '../../store/open-state-db.ts';
import { getFile, UNFINISHED_STATUSES, type PushFile } from '../../store/push-ledger.ts';
import { oneShotLogger, openOneShot } from './one-shot-deps.ts';
import { processClaimed, type FileResult, type PushSource } from '../file/push-file.ts';
import { pushAgain } from '../file/claim.ts';
import { compileSource, entityReadOptions } from '../read/index.ts';
import { entityDelta, sourceDelta } from '../delta/delta-plan.ts';
import { UsageError } from '../../usage-error.ts';
import { HELD_ERROR_CODE } from '../../store/delta-state.ts';

export class RetryRefusedError extends UsageError {}


export type RetryPlan = { kind: 'requeue'; from: string; to: string } | { kind: 'resume'; source: PushSource };

/** Decides what a retry of `file` does, or throws RetryRefusedError. Touches nothing. */
export async function planRetry(config: Config, file: PushFile): Promise<RetryPlan> {
  const label = `file #${file.id} (${file.original_name})`;
  // A file done without a row accepted (before issue 12 a file whose rows were all rejected was "done") is retried
  // like a failed one: from where it was archived.
  if (file.status === 'done' && (file.rows_accepted ?? 0) === 0) return { kind: 'requeue', ...(await requeueTarget(config, file, label)) };
  if (file.status === 'done') {
    const where = file.final_path ?? file.processing_path;
    throw new RetryRefusedError('RETRY_DONE', `${label} is done: nothing to retry. To send the same content again: ${pushAgain(file, where)}`);
  }
  if (file.status === 'duplicate') {
    const where = file.final_path ?? file.processing_path;
    throw new RetryRefusedError(
      'RETRY_DUPLICATE',
      `${label} was skipped as a duplicate of file #${file.duplicate_of ?? '?'} (same content, already done). To send it anyway: ${pushAgain(file, where)}`,
    );
  }
  if (file.status === 'failed' && file.error_code === HELD_ERROR_CODE) {
    // Held by the brakes, recorded as failed: retrying moved it back as if it had failed, and left a held entry
    // no release could ever send.
    throw new RetryRefusedError('RETRY_HELD', `${label} is held by the brakes, not failed: read its preview, then send it with pricing-agent files release ${file.id}`);
  }
  if (file.status === 'failed') return { kind: 'requeue', ...(await requeueTarget(config, file, label)) };
  if (UNFINISHED_STATUSES.includes(file.status)) return { kind: 'resume', source: resumeSource(config, file, label) };
  throw new RetryRefusedError('RETRY_UNKNOWN_STATUS', `${label} has status ${file.status}: nothing this agent version can retry`);
}

async function requeueTarget(config: Config, file: PushFile, label: string): Promise<{ from: string; to: string }> {
  const from = file.final_path;
  if (from === null || !(await stat(from).then((s) => s.isFile(), () => false))) {
    throw new RetryRefusedError('RETRY_FILE_GONE', `${label} is no longer at ${from ?? 'its failed/ path'} (retried already, or moved by hand)`);
  }
  if (file.source.startsWith('cli:')) {
    throw new RetryRefusedError('RETRY_NOT_WATCHED', `${label} came from a one-shot push; its folder is not watched. Push it again: ${pushAgain(file, from).replace(' --force', '')}`);
  }
  const source = config.sources.find((s) => s.name === file.source);
  if (!source || resolve(source.path) !== resolve(file.inbox)) {
    throw new RetryRefusedError(
      'RETRY_SOURCE_GONE',
      `${label} belongs to source ${file.source} with inbox ${file.inbox}, which is not in the config any more: move ${from} into a watched inbox yourself`,
    );
  }
  return { from, to: join(source.path, file.original_name) };
}

function resumeSource(config: Config, file: PushFile, label: string): PushSource {
  const base = { name: file.source, entity: file.entity, mode: file.mode, inbox: file.inbox, batchSize: file.batch_size };
  if (file.source.startsWith('cli:')) {
    const entity: Entity | undefined = ENTITIES.find((e) => e === file.entity);
    if (!entity) throw new RetryRefusedError('RETRY_SOURCE_GONE', `${label}: unknown entity ${file.entity}`);
    return { ...base, read: compileSource(entityReadOptions(entity)), ...entityDelta(entity, file.mode) };
  }
  const source = config.sources.find((s) => s.name === file.source);
  if (!source) {
    throw new RetryRefusedError('RETRY_SOURCE_GONE', `${label} belongs to source ${file.source}, which is not in the config any more: put it back to read the file as before`);
  }
  return { ...base, read: compileSource(source), ...sourceDelta(source, file.mode) };
}

/**
 * Moves the failed file back into the inbox without replacing a file of the same name there: a hard link fails when
 * the name exists (then nothing changed); where links are not supported, check and rename. Both ends are inside the
 * inbox folder, so this is one file system. The inbox entry is made durable before the failed/ entry goes.
 */
export async function requeueFile(from: string, to: string): Promise<void> {
  const taken = () => new RetryRefusedError('RETRY_NAME_TAKEN', `${to} already exists: wait until that file is processed, or rename one of them`);
  try {
    await link(from, to);
    await fsyncDirectory(join(to, '..'));
    await unlink(from);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw taken();
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EXDEV' && code !== 'ENOSYS') throw error;
    if (await stat(to).then(() => true, () => false)) throw taken();
    await rename(from, to);
    await fsyncDirectory(join(to, '..'));
  }
  await fsyncDirectory(join(from, '..'));
}

/** Whether a daemon answers on the configured address (the command asks its /readyz first). */
export interface DaemonPresence {
  readonly state: 'answers' | 'absent' | 'unknown';
  /** The address asked, for messages. */
  readonly url: string | null;
  /** Why it is unknown. */
  readonly reasons: readonly string[];
}

export type RetryOutcome =
  | { readonly action: 'requeued'; readonly file: PushFile; readonly from: string; readonly to: string }
  | { readonly action: 'resumed'; readonly file: PushFile; readonly result: FileResult };

async function readFileRow(config: Config, id: number): Promise<PushFile> {
  const db = await openStateDb(config.state, { readonly: true }).catch((error: unknown) => {
    throw new RetryRefusedError('RETRY_NO_DATABASE', `cannot read the state database: ${(error as Error).message}`);
  });
  try {
    const file = await getFile(db, id);
    if (!file) throw new RetryRefusedError('RETRY_UNKNOWN_ID', `no file with id ${id} in the ledger (see pricing-agent files list)`);
    return file;
  } finally {
    await db.close();
  }
}

/**
 * `files retry <id>`: a failed file goes back into its inbox; a file in processing/ is pushed now in this process,
 * unless a daemon answers (it owns processing/). `note` receives what a person should know on the way.
 */
export async function retryFile(config: Config, id: number, daemon: DaemonPresence, note: (text: string) => void): Promise<RetryOutcome> {
  const file = await readFileRow(config, id);
  const plan = await planRetry(config, file);
  if (plan.kind === 'requeue') {
    await requeueFile(plan.from, plan.to);
    return { action: 'requeued', file, from: plan.from, to: plan.to };
  }
  if (daemon.state === 'answers') {
    throw new RetryRefusedError(
      'RETRY_DAEMON_RUNNING',
      `a daemon answers on ${daemon.url ?? 'the configured address'}: it owns the files in processing/ and retries #${id} itself` +
        `${file.next_attempt_at !== null ? ` at ${file.next_attempt_at}` : ''}. To retry at once, restart it (unfinished files are resumed first).`,
    );
  }
  if (daemon.state === 'unknown') note(`cannot tell whether a daemon runs (${daemon.reasons.join('; ')}); if one does, stop it first`);
  const oneShot = await openOneShot(config, { logger: oneShotLogger(config) });
  try {
    return { action: 'resumed', file, result: await processClaimed(oneShot.deps, plan.source, file.id) };
  } finally {
    await oneShot.close();
  }
}
