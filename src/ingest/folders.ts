/**
 * The folders of an inbox. The agent's own sub-folders live inside the inbox (same file system, so every move is an
 * atomic rename) and are never watched:
 *
 *   <inbox>/processing/<id>-<name>          claimed, being sent (survives restarts)
 *   <inbox>/archive/<YYYY-MM-DD>/<name>     done: every row accepted, or some rejected (+ .report.json, .rejects.csv)
 *   <inbox>/failed/<name>                   file-level failure (+ .report.json with the error)
 *
 * The date is the server's local date: the folders are for the people who look into them.
 */
import { lstat, mkdir, rename } from 'node:fs/promises';
import { basename, extname, isAbsolute, join, relative, sep } from 'node:path';
import { fsyncDirectory } from '../atomic-file.ts';
import { fittedName } from '../file-name-length.ts';
import { pathExists } from '../path-exists.ts';
import { agentUid, folderProblem } from './inbox-file.ts';

export function processingDir(inbox: string): string {
  return join(inbox, 'processing');
}

export function archiveDir(inbox: string, at: Date): string {
  const day = `${at.getFullYear()}-${String(at.getMonth() + 1).padStart(2, '0')}-${String(at.getDate()).padStart(2, '0')}`;
  return join(inbox, 'archive', day);
}

export function failedDir(inbox: string): string {
  return join(inbox, 'failed');
}

/** The claimed file's name in processing/: the ledger id keeps two drops of the same name apart. */
export function processingPath(inbox: string, fileId: number, originalName: string): string {
  const prefix = `${fileId}-`;
  return join(processingDir(inbox), `${prefix}${fittedName(originalName, prefix.length)}`);
}

/**
 * The longest the agent adds after an archived or held name: `.preview.json` (13 bytes; `.report.json`,
 * `.rejects.csv` and `.missing.csv` are 12).
 */
const SUFFIX_ROOM = '.preview.json'.length;

/**
 * A free name in `dir` for `name`: the name itself, else `<stem>.<id><ext>`; shortened (fittedName) so that the
 * report's and the rejects' names next to it are legal too.
 */
export async function freeName(dir: string, name: string, fileId: number): Promise<string> {
  const plain = fittedName(name, SUFFIX_ROOM);
  if (!(await pathExists(join(dir, plain)))) return join(dir, plain);
  const id = `.${fileId}`;
  const fitted = fittedName(name, SUFFIX_ROOM + id.length);
  const ext = extname(fitted);
  return join(dir, `${basename(fitted, ext)}${id}${ext}`);
}


/** Moves `file` to `target` (same file system: atomic) and makes the move durable. */
export async function moveFile(file: string, target: string): Promise<void> {
  await mkdir(join(target, '..'), { recursive: true, mode: 0o750 });
  await rename(file, target);
  await fsyncDirectory(join(target, '..'));
}

/** One of the agent's own folders is a symbolic link or not a folder: the agent writes nowhere else. */
export class FolderError extends Error {
  readonly code = 'FOLDER_REFUSED';
}

/**
 * Creates `dir` (processing/, archive/<date>/, failed/ of `inbox`) level by level, refusing a level that is a
 * symbolic link, not a folder, not the agent user's or writable by others (inbox-file.ts): a link planted in a share must not make the agent write files and reports
 * outside its folders (found by the security tests: a symlinked archive/ received the data file and its report).
 */
export async function ownFolder(inbox: string, dir: string): Promise<void> {
  const rel = relative(inbox, dir);
  if (rel.startsWith('..') || isAbsolute(rel)) throw new FolderError(`${dir} is not inside the inbox ${inbox}`);
  let current = inbox;
  for (const part of rel.split(sep).filter((p) => p !== '')) {
    current = join(current, part);
    await mkdir(current, { mode: 0o750 }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    const problem = folderProblem(current, await lstat(current), agentUid());
    if (problem !== null) throw new FolderError(`refusing to use ${current}: ${problem}; the agent works only inside folders of its own`);
  }
}
