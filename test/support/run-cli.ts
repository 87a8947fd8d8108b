import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** How long a command may run before the test kills it: far above any command's run, even on a loaded machine. */
const CLI_TIMEOUT_MS = 120_000;

export const CLI_MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `pricing-agent ARGS` as a child process (node runs the TypeScript source directly). Asynchronous, so a
 * server in the test process keeps answering while the child runs.
 */
export function runCli(args: string[], env: Record<string, string | undefined> = {}, cwd?: string): Promise<CliRun> {
  return runMain(CLI_MAIN, args, env, cwd);
}

/** Runs the command line whose entry is `main` (this checkout's, or another build's: support/previous-release.ts). */
export function runMain(main: string, args: string[], env: Record<string, string | undefined> = {}, cwd?: string): Promise<CliRun> {
  const base: Record<string, string | undefined> = { ...process.env, PRICING_AGENT_CONFIG: undefined, PRICING_AGENT_DEBUG: undefined };
  return new Promise((resolve) => {
    execFile(process.execPath, [main, ...args], { env: { ...base, ...env }, cwd, timeout: CLI_TIMEOUT_MS }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      // A child killed at the deadline says so: its exit code alone (1) reads like the command's own failure.
      const killed = error?.killed === true ? `\n[run-cli] killed by ${error.signal ?? 'a signal'} after ${CLI_TIMEOUT_MS} ms` : '';
      resolve({ code, stdout, stderr: stderr + killed });
    });
  });
}
