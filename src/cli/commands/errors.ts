/**
 * How every command ends: success, or one clear message on stderr and an exit code. No stack trace for a
 * mistake a person can fix (set PRICING_AGENT_DEBUG=1 to see one), and no secret in any message: the text
 * passes through the logger's secret filter before it is printed.
 *
 * Exit codes (exit-codes.ts): 0 success, 1 failure, 2 a configuration or usage mistake (ConfigError, UsageError, a
 * commander usage error).
 * Errors elsewhere carry codes of their own, never exit codes: this is the one place that gives those.
 */
import { CommanderError } from 'commander';
import { ConfigError } from '../../config/index.ts';
import { EXIT_CONFIG, EXIT_FAILURE } from './exit-codes.ts';
import { redactSecrets } from '../../log.ts';
import { UsageError } from '../../usage-error.ts';

/**
 * The exit code for an error thrown by a command. A commander error thrown by an action (InvalidArgumentError: flags
 * that do not go together, an unknown stream name) is a usage mistake like those commander finds while parsing.
 */
export function exitCodeOfError(error: unknown): number {
  return error instanceof ConfigError || error instanceof UsageError || error instanceof CommanderError ? EXIT_CONFIG : EXIT_FAILURE;
}

/** The message to show for an error: its own text (a ConfigError lists its problems one per line). */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const text = error.message.trim();
    return redactSecrets(text === '' ? error.name : text);
  }
  return redactSecrets(String(error));
}

function debugDetail(error: unknown): string | undefined {
  if (process.env['PRICING_AGENT_DEBUG'] !== '1' || !(error instanceof Error)) return undefined;
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    parts.push(depth === 0 ? (current.stack ?? current.message) : `caused by: ${current.stack ?? current.message}`);
    current = current.cause;
  }
  return redactSecrets(parts.join('\n'));
}

/**
 * Wraps a command action: runs it, and turns a thrown error into its message on stderr and `process.exitCode`.
 * An action may return a number to choose its exit code. Uses `process.exitCode` rather than `process.exit()`
 * so pending output (stdout pipes, log lines) is flushed before the process ends.
 */
export function runCommand<A extends unknown[]>(
  action: (...args: A) => Promise<number | void> | number | void,
): (...args: A) => Promise<void> {
  return async (...args: A): Promise<void> => {
    try {
      const code = await action(...args);
      if (typeof code === 'number') process.exitCode = code;
    } catch (error) {
      process.stderr.write(`${describeError(error)}\n`);
      const detail = debugDetail(error);
      if (detail !== undefined) process.stderr.write(`${detail}\n`);
      process.exitCode = exitCodeOfError(error);
    }
  };
}
