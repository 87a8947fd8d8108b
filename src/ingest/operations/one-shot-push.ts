/**
 * The one-shot push of one file through the daemon's pipeline (pushFile / processClaimed), with the CLI's rules for
 * where the file comes from:
 *
 * - Resume first. Files of the same source left unfinished in processing/ (a crash, a SIGKILL, a deferral: API
 *   down, key rejected) are pushed again, oldest first, each from its first batch without a committed result (or by
 *   polling its import job). If one of them is FILE (same content; or, once FILE has left its place, same name),
 *   that resumed file is the result and FILE is not claimed again: running the same command again after a crash
 *   finishes the file instead of starting it over.
 * - A file directly in the source's inbox is claimed as the daemon would claim it (moved into processing/).
 * - Any other file (`--entity`, or `--source` with a file elsewhere) is copied, never moved: the person's file
 *   stays where it is. The copy is made inside processing/, in a dot-named folder of this process (no watcher looks
 *   there, and the claim's rename into processing/ stays on one file system); the folder is removed afterwards, and
 *   a later run removes it if this process died.
 *
 * Not guarded: a daemon pushing the same source at the same moment. Its files in processing/ look unfinished to
 * this command too; bulk sends are idempotent per business key, so nothing is written twice, but both would work
 * on the file. Run one-shot pushes for sources the daemon watches only while it is stopped, or drop the file into
 * the inbox instead.
 */
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, readdir, realpath, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { unfinishedFiles, type PushFile } from '../../store/push-ledger.ts';
import { sha256Of } from '../file/claim.ts';
import { ownFolder, processingDir } from '../folders.ts';
import { processClaimed, pushFile, type FileResult, type PushDeps, type PushOptions } from '../file/push-file.ts';
import { PushFileMissingError, PushUsageError, type PushTarget } from './push-target.ts';

export interface PushRunResult {
  /** FILE's outcome (claimed now, or resumed). */
  readonly main: FileResult;
  /** Other unfinished files of the source, resumed before FILE. */
  readonly resumed: readonly FileResult[];
}

/** Thrown for a FILE that neither exists nor is waiting in processing/. */

const COPY_PREFIX = '.push-';

async function isFile(path: string): Promise<boolean> {
  return stat(path).then((s) => s.isFile(), () => false);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // someone else's process: alive
  }
}

/** Removes copy folders of one-shot pushes whose process is gone (a crash between the copy and the claim). */
async function removeStaleCopies(inbox: string): Promise<void> {
  const dir = processingDir(inbox);
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const pid = Number(/^\.push-(\d+)-/.exec(name)?.[1]);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && !alive(pid)) {
      await rm(join(dir, name), { recursive: true, force: true });
    }
  }
}

/** The unfinished file that is FILE: same content while FILE exists, else the newest with FILE's name. */
async function matchUnfinished(file: string, exists: boolean, unfinished: readonly PushFile[]): Promise<PushFile | undefined> {
  if (unfinished.length === 0) return undefined;
  const name = basename(file);
  const newestFirst = [...unfinished].reverse();
  if (!exists) return newestFirst.find((f) => f.original_name === name);
  const sha256 = await sha256Of(file);
  // A claim a crash cut short has no hash yet; its file may still be FILE, in the inbox.
  return newestFirst.find((f) => f.sha256 === sha256) ?? newestFirst.find((f) => f.sha256 === '' && f.original_name === name);
}

async function inInbox(file: string, inbox: string): Promise<boolean> {
  const [dir, box] = await Promise.all([realpath(dirname(file)), realpath(inbox)]);
  return dir === box;
}

/** Claims and pushes FILE: in place if it is in the inbox, else through a private copy. */
async function claimAndPush(deps: PushDeps, target: PushTarget, file: string, options: PushOptions): Promise<FileResult> {
  const { source } = target;
  if (await inInbox(file, source.inbox)) return pushFile(deps, source, file, options);
  const dir = join(processingDir(source.inbox), `${COPY_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}`);
  await ownFolder(source.inbox, dir); // processing/ must be the agent's own folder, not a planted symlink
  try {
    const copy = join(dir, basename(file));
    await copyFile(file, copy);
    return await pushFile(deps, source, copy, options);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function runPush(deps: PushDeps, target: PushTarget, file: string, options: PushOptions): Promise<PushRunResult> {
  const { source } = target;
  if (target.ownInbox) await mkdir(source.inbox, { recursive: true, mode: 0o750 });
  else if (!(await stat(source.inbox).then((s) => s.isDirectory(), () => false))) {
    throw new PushUsageError(`the folder of ${target.label} does not exist: ${source.inbox}; create it or correct the source's path`);
  }
  await removeStaleCopies(source.inbox);
  const exists = await isFile(file);
  const unfinished = await unfinishedFiles(deps.db, source.name);
  const match = await matchUnfinished(file, exists, unfinished);
  if (!exists && match === undefined) throw new PushFileMissingError(`${file}: no such file`);

  const resumed: FileResult[] = [];
  let main: FileResult | null = null;
  for (const waiting of unfinished) {
    if (deps.signal?.aborted) break;
    // FILE resumed: as asked now (`--full`); the others as they were started.
    const result = await processClaimed(deps, source, waiting.id, waiting.id === match?.id ? options : {});
    if (waiting.id === match?.id) main = result;
    else resumed.push(result);
  }
  if (main === null && deps.signal?.aborted) {
    const where = match === undefined ? 'it was not claimed and nothing of it was sent' : 'it waits in processing/ and is resumed by the next push';
    throw new Error(`interrupted before ${basename(file)} was pushed: ${where}`);
  }
  main ??= await claimAndPush(deps, target, file, options);
  return { main, resumed };
}
