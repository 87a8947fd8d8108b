/**
 * The files that change the whole process run in a process of their own (test/support/own-process.ts): a file that
 * starts using nock, `vi.mock` or `vi.stubGlobal` without being listed there fails here rather than, later and by
 * chance, whichever file the worker runs after it.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { OWN_PROCESS, PROCESS_WIDE } from '../support/own-process.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

async function testFiles(): Promise<string[]> {
  const found: string[] = [];
  for (const top of ['test', 'src']) {
    for (const entry of await readdir(join(ROOT, top), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && entry.name.endsWith('.test.ts')) found.push(relative(ROOT, join(entry.parentPath, entry.name)));
    }
  }
  return found.sort();
}

it('every test file that changes the whole process runs in a process of its own', async () => {
  const files = await testFiles();
  const processWide: string[] = [];
  for (const file of files) {
    if (file === 'test/unit/own-process.test.ts') continue; // names the patterns, uses none
    const text = await readFile(join(ROOT, file), 'utf8');
    if (PROCESS_WIDE.some((pattern) => pattern.test(text))) processWide.push(file);
  }
  expect(processWide).toEqual([...OWN_PROCESS].sort());
});

it('finds what it looks for', () => {
  expect(PROCESS_WIDE.some((p) => p.test("import nock from 'nock';"))).toBe(true);
  expect(PROCESS_WIDE.some((p) => p.test("vi.mock('../x.ts')"))).toBe(true);
  expect(PROCESS_WIDE.some((p) => p.test("vi.doMock('../x.ts')"))).toBe(true);
  expect(PROCESS_WIDE.some((p) => p.test("vi.stubGlobal('fetch', f)"))).toBe(true);
  expect(PROCESS_WIDE.some((p) => p.test("vi.stubEnv('X', '1')"))).toBe(false);
});
