/**
 * What sharing a worker process between test files (vitest.config.ts, `isolate: false`) requires, held here so that
 * it fails at once rather than, later and by chance, in whichever file the worker runs next:
 * - the files that change the whole process run in a process of their own (test/support/own-process.ts): a file that
 *   starts using nock, `vi.mock` or `vi.stubGlobal` without being listed there fails here;
 * - no support module registers a hook at its top level: it is loaded once per worker, so the hook would run for the
 *   first file that imported it only (test/support/after-test.ts says what to use instead).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { OWN_PROCESS, PROCESS_WIDE } from '../support/own-process.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The TypeScript files under test/ and src/ whose name passes `keep`, as paths from the repository's root. */
async function filesNamed(keep: (name: string) => boolean): Promise<string[]> {
  const found: string[] = [];
  for (const top of ['test', 'src']) {
    for (const entry of await readdir(join(ROOT, top), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && entry.name.endsWith('.ts') && keep(entry.name)) found.push(relative(ROOT, join(entry.parentPath, entry.name)));
    }
  }
  return found.sort();
}

const testFiles = () => filesNamed((name) => name.endsWith('.test.ts'));

/** Setup files: Vitest runs them again for every test file, so their top-level hooks are registered for each. */
const SETUP_FILES = ['test/support/after-test-setup.ts', 'test/support/postgres-file-setup.ts'];
/** A Vitest hook called at the top level of a module (not inside a function that a test file calls). */
const TOP_LEVEL_HOOK = /^(?:beforeAll|beforeEach|afterAll|afterEach)\(/m;

it('every test file that changes the whole process runs in a process of its own', async () => {
  const files = await testFiles();
  const processWide: string[] = [];
  for (const file of files) {
    if (file === 'test/unit/shared-worker.test.ts') continue; // names the patterns, uses none
    const text = await readFile(join(ROOT, file), 'utf8');
    if (PROCESS_WIDE.some((pattern) => pattern.test(text))) processWide.push(file);
  }
  expect(processWide).toEqual([...OWN_PROCESS].sort());
});

it('no support module registers a hook at its top level', async () => {
  const modules = (await filesNamed((name) => !name.endsWith('.test.ts'))).filter((file) => file.startsWith('test/') && !SETUP_FILES.includes(file));
  const withHook: string[] = [];
  for (const file of modules) if (TOP_LEVEL_HOOK.test(await readFile(join(ROOT, file), 'utf8'))) withHook.push(file);
  expect(withHook).toEqual([]);
  for (const file of SETUP_FILES) expect(TOP_LEVEL_HOOK.test(await readFile(join(ROOT, file), 'utf8')), file).toBe(true);
});

it('finds what it looks for', () => {
  expect(TOP_LEVEL_HOOK.test("import x from 'y';\nafterEach(async () => {\n")).toBe(true);
  expect(TOP_LEVEL_HOOK.test('export function harness() {\n  afterEach(async () => {\n')).toBe(false);
  expect(PROCESS_WIDE.some((p) => p.test("import nock from 'nock';"))).toBe(true);
  expect(PROCESS_WIDE.some((p) => p.test('const { default: nock } = await import("nock");'))).toBe(true);
  expect(PROCESS_WIDE.some((p) => p.test("vi.mock('../x.ts')"))).toBe(true);
  expect(PROCESS_WIDE.some((p) => p.test("vi.doMock('../x.ts')"))).toBe(true);
  expect(PROCESS_WIDE.some((p) => p.test("vi.stubGlobal('fetch', f)"))).toBe(true);
  expect(PROCESS_WIDE.some((p) => p.test("vi.stubEnv('X', '1')"))).toBe(false);
});
