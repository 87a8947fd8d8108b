/**
 * `pricing-agent files release NAME`: a file the brakes held (held/ of its inbox) is sent after all. A person read
 * its preview and decided the export is right.
 *
 * The file goes back into its source's inbox under its name (never over another file of that name), and its release
 * is recorded: the next claim of that content by the source is sent without judging the brakes (once: a later drop
 * of the same content is braked again). When a daemon answers, it claims the file; otherwise it is pushed now, in
 * this process, like `push --source`.
 *
 * NAME is the held file's name (as in held/ or its original name) or its ledger id; `--source` picks one when two
 * sources hold files of that name.
 */
import { rm } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { Config } from '../../config/index.ts';
import { openStateDb } from '../../store/open-state-db.ts';
import { heldFiles, releaseHeld, type HeldFileRow } from '../../store/delta-state.ts';
import { requeueFile, RetryRefusedError } from './file-retry.ts';
import { previewPathOf } from '../delta/delta-plan.ts';
import { UsageError } from '../../usage-error.ts';
import { pathExists } from '../../path-exists.ts';

export class ReleaseRefusedError extends UsageError {}

function matches(row: HeldFileRow, name: string): boolean {
  return String(row.file_id) === name || row.name === name || basename(row.held_path) === name;
}

export interface Released {
  readonly file: HeldFileRow;
  /** Where the file is now: its source's inbox. */
  readonly to: string;
}

/** Finds the held file, moves it back into its inbox and records the release. Throws ReleaseRefusedError. */
export async function releaseFile(config: Config, name: string, sourceName: string | undefined): Promise<Released> {
  const db = await openStateDb(config.state).catch((error: unknown) => {
    throw new ReleaseRefusedError('RELEASE_NO_DATABASE', `cannot open the state database: ${(error as Error).message}`);
  });
  try {
    const held = (await heldFiles(db, sourceName)).filter((row) => matches(row, name));
    if (held.length === 0) {
      const all = (await heldFiles(db, sourceName)).map((r) => `${basename(r.held_path)} (${r.source})`);
      const known = all.length === 0 ? 'no file is held' : `held: ${all.join(', ')}`;
      throw new ReleaseRefusedError('RELEASE_UNKNOWN', `no held file named ${JSON.stringify(name)}${sourceName ? ` in source ${sourceName}` : ''} (${known})`);
    }
    if (held.length > 1) {
      const sources = [...new Set(held.map((r) => r.source))];
      throw new ReleaseRefusedError('RELEASE_AMBIGUOUS', `${held.length} held files match ${JSON.stringify(name)} (sources ${sources.join(', ')}): give --source or the file id`);
    }
    const file = held[0] as HeldFileRow;
    const source = config.sources.find((s) => s.name === file.source);
    if (!source) {
      throw new ReleaseRefusedError('RELEASE_SOURCE_GONE', `${file.name} belongs to source ${file.source}, which is not in the config any more`);
    }
    const to = join(resolve(source.path), file.name);
    if (!(await pathExists(file.held_path))) {
      throw new ReleaseRefusedError('RELEASE_FILE_GONE', `#${file.file_id} ${file.name} is no longer at ${file.held_path} (moved or deleted by hand): drop the file into the inbox again to have it compared anew`);
    }
    // Released before the move: a daemon claiming the file at once must find the release.
    await releaseHeld(db, file.file_id, db.now());
    try {
      await requeueFile(file.held_path, to);
    } catch (error) {
      await releaseHeld(db, file.file_id, null);
      if (error instanceof RetryRefusedError) throw new ReleaseRefusedError('RELEASE_NAME_TAKEN', error.message);
      throw error;
    }
    await rm(previewPathOf(file.held_path), { force: true });
    return { file, to };
  } finally {
    await db.close();
  }
}
