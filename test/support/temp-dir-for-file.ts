/** A temp folder for every test of a file: made in beforeAll, removed with all it holds in afterAll. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openForFile } from './open-for-file.ts';

export function tempDirForFile(prefix: string): { readonly path: string } {
  return openForFile(async () => {
    const path = await mkdtemp(join(tmpdir(), prefix));
    return { path, close: () => rm(path, { recursive: true, force: true }) };
  });
}
