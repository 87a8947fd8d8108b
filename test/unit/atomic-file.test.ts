import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commitFile, temporaryPath, writeFileAtomic, writeFileAtomicSync } from '../../src/atomic-file.ts';

const fresh = () => mkdtemp(join(tmpdir(), 'pa-atomic-'));

describe('durable writes (src/atomic-file.ts)', () => {
  it('replaces a file whole and leaves no temporary file behind', async () => {
    const dir = await fresh();
    const path = join(dir, 'report.json');
    await writeFile(path, 'old');
    await writeFileAtomic(path, ['new ', 'content']);
    writeFileAtomicSync(join(dir, 'until'), '123\n');
    expect(await readFile(path, 'utf8')).toBe('new content');
    expect(await readFile(join(dir, 'until'), 'utf8')).toBe('123\n');
    expect((await readdir(dir)).sort()).toEqual(['report.json', 'until']);
  });

  it('keeps the old file and removes the temporary one when writing fails half way', async () => {
    const dir = await fresh();
    const path = join(dir, 'rejects.csv');
    await writeFile(path, 'old');
    function* failing(): Generator<string> {
      yield 'half';
      throw new Error('disk full');
    }
    await expect(writeFileAtomic(path, failing())).rejects.toThrow('disk full');
    expect(await readFile(path, 'utf8')).toBe('old');
    expect(await readdir(dir)).toEqual(['rejects.csv']);
  });

  it('names temporary files as dot-files ending in .tmp, never twice the same', async () => {
    const dir = await fresh();
    const a = temporaryPath(join(dir, 'prices-1-9.csv'));
    expect(a).toMatch(/\/\.prices-1-9\.csv\.\d+-[0-9a-f]{8}\.tmp$/);
    expect(temporaryPath(join(dir, 'prices-1-9.csv'))).not.toBe(a);
    await writeFile(a, 'streamed');
    await commitFile(a, join(dir, 'prices-1-9.csv'));
    expect(await readdir(dir)).toEqual(['prices-1-9.csv']);
  });
});
