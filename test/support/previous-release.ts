/**
 * The previous release of the agent, for upgrade and rollback tests: its source taken from git (the last commit
 * before migration 0018 landed: the first parent of the merge that added it), run by node as it is (TypeScript),
 * with this checkout's dependencies.
 */
import { execFileSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { runMain, type CliRun } from './run-cli.ts';

const REPO = resolve(import.meta.dirname, '../..');
export const PREVIOUS_RELEASE = 'a126756^1';

/** Unpacks the previous release into `tree` (an empty folder); returns a runner of its command line. */
export function previousRelease(tree: string): (args: string[], env?: Record<string, string | undefined>) => Promise<CliRun> {
  const archive = execFileSync('git', ['-C', REPO, 'archive', PREVIOUS_RELEASE, 'src', 'package.json'], { maxBuffer: 64 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', tree], { input: archive });
  symlinkSync(join(REPO, 'node_modules'), join(tree, 'node_modules'));
  const main = join(tree, 'src', 'cli', 'main.ts');
  return (args, env = {}) => runMain(main, args, env);
}
