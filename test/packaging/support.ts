/** Shared helpers of the packaging tests: repository paths, temp directories, the Dockerfile's instructions. */
import { createRequire } from 'node:module';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDirForTest } from '../support/after-test.ts';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));
export const KEY = 'svc_live_PackagingTestKey00001111';

export function repoFile(path: string): string {
  return join(REPO, path);
}

export function readRepoFile(path: string): string {
  return readFileSync(repoFile(path), 'utf8');
}

/** The pages a reader reads: README.md and every docs/*.md, as paths from the repository's root. */
export function markdownPages(): string[] {
  return ['README.md', ...readdirSync(repoFile('docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
}

/** The Node.js version rule of src/cli/main.ts, which hands it over instead of running when it is required. */
export interface NodeVersionRule {
  readonly isSupportedNode: (version: string) => boolean;
  readonly unsupportedNodeMessage: (version: string, execPath: string, scriptPath: string, exists: (path: string) => boolean) => string | undefined;
}

export const CLI_MAIN_FILE = repoFile('src/cli/main.ts');
export const nodeVersionRule = createRequire(import.meta.url)(CLI_MAIN_FILE) as NodeVersionRule;

/** A fresh temp directory, removed after the test. */
export function tempDir(prefix = 'pricing-agent-packaging-'): string {
  return tempDirForTest(prefix);
}

/** One Dockerfile instruction: keyword in upper case, the arguments with line continuations joined. */
export interface Instruction {
  readonly keyword: string;
  readonly args: string;
  readonly line: number;
}

/** Splits a Dockerfile into instructions (comments and blank lines dropped, `\` continuations joined). */
export function dockerfileInstructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending: { text: string; line: number } | null = null;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trimEnd();
    if (pending === null && (line.trim() === '' || line.trimStart().startsWith('#'))) return;
    if (pending !== null && line.trimStart().startsWith('#')) return; // comment inside a continuation
    const continued = line.endsWith('\\');
    const part = continued ? line.slice(0, -1) : line;
    pending = pending === null ? { text: part.trim(), line: index + 1 } : { ...pending, text: `${pending.text} ${part.trim()}` };
    if (!continued) {
      const [keyword = '', ...rest] = pending.text.split(/\s+/);
      out.push({ keyword: keyword.toUpperCase(), args: rest.join(' '), line: pending.line });
      pending = null;
    }
  });
  return out;
}

/** The instructions of the last stage (after the last FROM). */
export function finalStage(instructions: readonly Instruction[]): Instruction[] {
  const last = instructions.map((i) => i.keyword).lastIndexOf('FROM');
  return instructions.slice(last);
}

/** The JSON array of an exec-form instruction (`CMD ["node", "-e", "..."]`), or throws. */
export function execForm(args: string): string[] {
  const start = args.indexOf('[');
  if (start === -1) throw new Error(`not in exec (JSON) form: ${args}`);
  return JSON.parse(args.slice(start)) as string[];
}
