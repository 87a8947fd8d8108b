/**
 * Durable writes: the one way the agent writes a file that people, POS systems or a later run read.
 *
 * The content goes to a temporary name in the same directory, is fsynced, renamed over the final name (atomic within
 * a filesystem), and the directory is fsynced so the rename itself survives a power loss. A reader sees either the
 * old file (or none) or all of the new one, never a part.
 *
 * Temporary names start with a dot and end in `.tmp` (`.<name>.<pid>-<random>.tmp`), so a POS picking up
 * `prices-*.csv` never matches one, nor does an inbox watcher; they are created exclusively and carry the process
 * id and a random part, so two writers of the same file (a daemon and a one-shot command, or two tasks of one
 * process) never share one.
 *
 * Used for everything the agent writes: reports, rejects, the canonical CSV of an import, per-store price files,
 * mirror exports, the Retry-After record.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fittedName } from './file-name-length.ts';

/** A fresh temporary name next to `path`; a long name is cut (fittedName) so that the temporary one is legal too. */
export function temporaryPath(path: string): string {
  const unique = `.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  return join(dirname(path), `.${fittedName(basename(path), unique.length + 1)}${unique}`);
}

/** Writes `chunks` to `path` atomically and durably. On failure the temporary file is removed. */
export async function writeFileAtomic(
  path: string,
  chunks: Iterable<string> | AsyncIterable<string>,
  mode = 0o640,
): Promise<void> {
  const temporary = temporaryPath(path);
  try {
    const handle = await open(temporary, 'wx', mode);
    try {
      for await (const chunk of chunks) await handle.write(chunk);
    } catch (error) {
      await handle.close();
      throw error;
    }
    await commitFile(temporary, path, handle);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/**
 * `writeFileAtomic` for a small text written from synchronous code (a transport hook): the same temporary name,
 * fsyncs and rename.
 */
export function writeFileAtomicSync(path: string, text: string, mode = 0o640): void {
  const temporary = temporaryPath(path);
  try {
    const fd = openSync(temporary, 'wx', mode);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  fsyncDirectorySync(dirname(path));
}

/**
 * Makes a fully written temporary file durable under its final name: fsyncs its content (through `handle` when the
 * writer still holds it open; the handle is closed), renames it to `path` and fsyncs the directory. For writers that
 * stream into their own temporary file (the canonical CSV, a mirror export appended page by page).
 */
export async function commitFile(temporary: string, path: string, handle?: FileHandle): Promise<void> {
  const file = handle ?? (await open(temporary, 'r+'));
  try {
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temporary, path);
  await fsyncDirectory(dirname(path));
}

/** Creates `dir` (and parents) if missing; when it had to be created, fsyncs its parent so the entry persists. */
export async function ensureDirectory(dir: string, mode = 0o750): Promise<void> {
  const created = await mkdir(dir, { recursive: true, mode });
  if (created !== undefined) await fsyncDirectory(dirname(dir));
}

/**
 * Errors of a directory fsync on platforms and filesystems that cannot do one (Windows cannot open a directory;
 * some network filesystems refuse the call): there the rename is as durable as the platform makes it.
 */
const CANNOT_FSYNC_DIRECTORY = new Set(['EISDIR', 'EPERM', 'EINVAL', 'ENOTSUP']);

function cannotFsyncDirectory(error: unknown): boolean {
  return CANNOT_FSYNC_DIRECTORY.has((error as NodeJS.ErrnoException).code ?? '');
}

/** fsync of a directory: makes renames and new entries in it durable. */
export async function fsyncDirectory(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch (error) {
    if (!cannotFsyncDirectory(error)) throw error;
  } finally {
    await handle?.close();
  }
}

function fsyncDirectorySync(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch (error) {
    if (!cannotFsyncDirectory(error)) throw error;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
