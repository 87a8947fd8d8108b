/**
 * Opening a file that came from an inbox, and checking the agent's own folders in one: the two rules that keep an
 * inbox writer (anyone in the inbox's group) from making the agent read a file it was not given.
 *
 * - A file is opened without following a link (O_NOFOLLOW: a symlink swapped in after a check fails the open with
 *   ELOOP) and without blocking (O_NONBLOCK: a FIFO cannot hold the agent), and what was opened is checked on the
 *   descriptor (fstat): a regular file. Everything read from the file is read from that descriptor.
 * - The agent's folders inside an inbox (processing/, archive/, failed/, held/) must be folders owned by the agent's
 *   user and writable by nobody else. Then no group member can put, swap or rename anything inside them; with the
 *   sticky bit on the inbox (docs/deployment.md) they cannot rename the folders themselves either. An inbox whose
 *   folders are otherwise is refused as a whole, never worked in.
 */
import { constants, type Stats } from 'node:fs';
import { lstat, open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/** A file of an inbox that is not a plain file of its own (a link, a FIFO, a folder): refused, never read. */
export class InboxFileError extends Error {
  readonly code = 'FILE_REFUSED';
}

const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** Opens `path` for reading: never through a symbolic link, only a regular file (checked on the descriptor). */
export async function openInboxFile(path: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(path, READ_FLAGS);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw new InboxFileError(`${path} is a symbolic link: the agent reads only files it was given`);
    throw error;
  }
  const info = await handle.stat().catch(async (error: unknown) => {
    await handle.close();
    throw error;
  });
  if (!info.isFile()) {
    await handle.close();
    throw new InboxFileError(`${path} is not a regular file`);
  }
  return handle;
}

/** The same file (device and inode) as `expected`: what was opened is what was moved. */
export function sameFile(a: Pick<Stats, 'dev' | 'ino'>, b: Pick<Stats, 'dev' | 'ino'>): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/** The agent's own folders of an inbox. */
export const AGENT_FOLDERS = ['processing', 'archive', 'failed', 'held'] as const;

/** The user the agent runs as (the owner its folders must have); undefined where there are no user ids (Windows). */
export function agentUid(): number | undefined {
  return process.geteuid?.();
}

/**
 * Why `dir`, one of the agent's folders, may not be worked in, or null. `uid`: the agent's user (undefined: no
 * owner check, where the platform has none).
 */
export function folderProblem(dir: string, info: Stats, uid: number | undefined): string | null {
  if (info.isSymbolicLink()) return `${dir} is a symbolic link`;
  if (!info.isDirectory()) return `${dir} is not a folder`;
  if (uid !== undefined && info.uid !== uid) return `${dir} belongs to user id ${info.uid}, not to the agent's user (${uid})`;
  if ((info.mode & 0o022) !== 0) return `${dir} can be written by its group or others (mode ${(info.mode & 0o777).toString(8).padStart(4, '0')})`;
  return null;
}

/**
 * Why the inbox must not be worked in, or null: the first of its agent folders (those that exist) that is not the
 * agent's own. The sentence says what to do.
 */
export async function inboxFoldersProblem(inbox: string, uid: number | undefined = agentUid()): Promise<string | null> {
  for (const name of AGENT_FOLDERS) {
    const dir = join(inbox, name);
    const info = await lstat(dir).catch(() => null);
    if (info === null) continue;
    const problem = folderProblem(dir, info, uid);
    if (problem !== null) {
      return `inbox refused: ${problem}; the agent works only in folders of its own (chown them to the agent's user, chmod 0750, and give the inbox the sticky bit: docs/deployment.md)`;
    }
  }
  return null;
}
