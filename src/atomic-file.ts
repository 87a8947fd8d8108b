/**
 * Writing a file so that a reader sees either nothing or all of it: the content goes to a temporary name in the
 * same directory, is fsynced, renamed over the final name (atomic within a filesystem), and the directory is
 * fsynced so the rename itself survives a power loss. The temporary name starts with a dot and ends in `.tmp`, so
 * a POS picking up `prices-*.csv` never matches it, nor does an inbox watcher. It carries the process id: two
 * processes writing the same file (a daemon and a one-shot command) never share a temporary file.
 *
 * Used for everything the agent writes for people and POS systems: reports, rejects, per-store price files,
 * mirror exports.
 */
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Writes `chunks` to `path` atomically and durably. On failure the temporary file is removed. */
export async function writeFileAtomic(
  path: string,
  chunks: Iterable<string> | AsyncIterable<string>,
  mode = 0o640,
): Promise<void> {
  const dir = dirname(path);
  const temporary = join(dir, `.${basename(path)}.${process.pid}.tmp`);
  try {
    const handle = await open(temporary, 'w', mode);
    try {
      for await (const chunk of chunks) await handle.write(chunk);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  await fsyncDirectory(dir);
}

/** Creates `dir` (and parents) if missing; when it had to be created, fsyncs its parent so the entry persists. */
export async function ensureDirectory(dir: string, mode = 0o750): Promise<void> {
  const created = await mkdir(dir, { recursive: true, mode });
  if (created !== undefined) await fsyncDirectory(dirname(dir));
}

/** fsync of a directory: makes renames and new entries in it durable. */
export async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
