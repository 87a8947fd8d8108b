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
import { mkdir, rename, stat } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { fsyncDirectory } from '../atomic-file.ts';

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
  return join(processingDir(inbox), `${fileId}-${originalName}`);
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/** A free name in `dir` for `name`: the name itself, else `<stem>.<id><ext>`. */
export async function freeName(dir: string, name: string, fileId: number): Promise<string> {
  if (!(await exists(join(dir, name)))) return join(dir, name);
  const ext = extname(name);
  return join(dir, `${basename(name, ext)}.${fileId}${ext}`);
}

/** Moves `file` to `target` (same file system: atomic) and makes the move durable. */
export async function moveFile(file: string, target: string): Promise<void> {
  await mkdir(join(target, '..'), { recursive: true, mode: 0o750 });
  await rename(file, target);
  await fsyncDirectory(join(target, '..'));
}
