/**
 * The optional JSON Lines export of a mirror listing: `<dir>/<stream folder>/<stream folder>-<listing start>.jsonl`,
 * one record per line as the API returned it, for systems that want the changes of each run as a file.
 *
 * A listing's rows are appended to a temporary file (`.<name>.tmp`, a dot-file, so a reader picking up `*.jsonl`
 * never sees it) BEFORE each page is committed to the mirror table, and the file is fsynced and renamed when the
 * listing completes, BEFORE the watermark moves. What survives a crash: the temporary name is fixed per listing,
 * so a resumed listing appends to the same file; a page fetched again after a crash appears twice (rows are
 * upserts by key: the later line wins), and no row of a listing is ever missing from its file. An empty listing
 * writes no file.
 */
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { commitFile, ensureDirectory } from '../atomic-file.ts';
import { pathExists } from '../path-exists.ts';
import type { MirrorStream } from '../store/mirror-tables.ts';

export class MirrorExport {
  readonly folder: string;
  readonly path: string;
  readonly temporary: string;

  constructor(dir: string, stream: MirrorStream, listingStartedAt: string) {
    const name = stream.replace(':', '-');
    const stamp = listingStartedAt.replace(/[-:]/g, '').replace(/\.\d+/, '');
    this.folder = join(dir, name);
    const file = `${name}-${stamp}.jsonl`;
    this.path = join(this.folder, file);
    this.temporary = join(this.folder, `.${file}.tmp`);
  }

  async append(rows: readonly unknown[]): Promise<void> {
    if (rows.length === 0) return;
    await ensureDirectory(this.folder);
    let text = '';
    for (const row of rows) text += `${JSON.stringify(row)}\n`;
    await appendFile(this.temporary, text, { mode: 0o640 });
  }

  /** Makes the file durable under its final name; returns its path, or null when the listing had no rows. */
  async finish(): Promise<string | null> {
    if (!(await pathExists(this.temporary))) return (await pathExists(this.path)) ? this.path : null;
    await commitFile(this.temporary, this.path);
    return this.path;
  }
}
