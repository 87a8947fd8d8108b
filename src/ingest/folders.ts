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
import { constants, createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { mkdir, open, rename, stat, writeFile } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';

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

/** fsync a directory, so that a rename into it survives a power cut. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Moves `file` to `target` (same file system: atomic) and makes the move durable. */
export async function moveFile(file: string, target: string): Promise<void> {
  await mkdir(join(target, '..'), { recursive: true, mode: 0o750 });
  await rename(file, target);
  await syncDir(join(target, '..'));
}

/**
 * Writes `content` to `target` through a temporary name, fsynced and renamed: a reader never sees half a file.
 * Mode 0640: reports name rows of the retailer's data.
 */
export async function writeFileAtomic(target: string, content: string | Uint8Array): Promise<void> {
  const temp = `${target}.tmp-${process.pid}`;
  await writeFile(temp, content, { mode: 0o640 });
  await syncAndRename(temp, target);
}

/** As writeFileAtomic, for content too large to hold in memory. */
export async function writeStreamAtomic(target: string, content: Readable): Promise<void> {
  const temp = `${target}.tmp-${process.pid}`;
  await pipeline(content, createWriteStream(temp, { mode: 0o640 }));
  await syncAndRename(temp, target);
}

async function syncAndRename(temp: string, target: string): Promise<void> {
  const handle = await open(temp, constants.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, target);
}
