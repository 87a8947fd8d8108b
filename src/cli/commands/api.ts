/**
 * `pricing-agent api clear-wait [--json]`: ends the Retry-After window the API gave (issue 27, point 2), for every
 * process of the agent. The window is honoured within api.max_retry_after; this is for the operator who knows the
 * API is back sooner (a proxy's 503 after maintenance, a rate-limit ceiling raised). Safe while the daemon runs: it
 * reads the stored window every few seconds while it waits (rate-gate.ts) and sends again at its next look.
 */
import { Command } from 'commander';
import { GATE_RECHECK_MS, windowInForce } from '../../api/rate-gate.ts';
import { maxRetryAfterMs } from '../../config/index.ts';
import { EXIT_OK } from './exit-codes.ts';
import { apiWaitView } from '../../status/api-wait.ts';
import { clearWaitWindow } from '../../store/api-state.ts';
import { isMissingState, openStateDb, stateLocation } from '../../store/open-state-db.ts';
import { configOption, loadConfigForCommand } from './config.ts';
import { runCommand } from './errors.ts';

interface ClearWaitOptions {
  readonly config: string;
  readonly json?: boolean;
}

export function apiCommand(): Command {
  const command = new Command('api').description('the agent\'s dealings with the API: the Retry-After window');
  command
    .command('clear-wait')
    .description('end the Retry-After window the API gave, for every process of the agent (a running daemon too)')
    .addOption(configOption())
    .option('--json', 'print the result as JSON')
    .addHelpText('after', `\nA running daemon notices within ${GATE_RECHECK_MS / 1000} s. Exit codes: 0 done (also when no window was open), 2 a configuration mistake.`)
    .action(
      runCommand(async (options: ClearWaitOptions) => {
        const config = await loadConfigForCommand(options.config);
        try {
          // Read-only first: a state that does not exist yet is not created by this command.
          await (await openStateDb(config.state, { readonly: true })).close();
        } catch (error) {
          if (!isMissingState(error)) throw error;
          const text = `No state database at ${stateLocation(config.state)}: the agent has no Retry-After window to clear.`;
          process.stdout.write(options.json === true ? `${JSON.stringify({ cleared: null })}\n` : `${text}\n`);
          return EXIT_OK;
        }
        const db = await openStateDb(config.state);
        try {
          const now = Date.now();
          const before = await clearWaitWindow(db, now);
          const window = windowInForce(before, null, maxRetryAfterMs(config.api), now);
          const view = window === null ? null : apiWaitView(window);
          if (options.json === true) process.stdout.write(`${JSON.stringify({ cleared: view })}\n`);
          else if (view === null) process.stdout.write('No Retry-After window was open: the agent was not waiting.\n');
          else {
            process.stdout.write(
              `Ended the wait: ${view.text}.\nThe agent sends again now; a running daemon notices within ${GATE_RECHECK_MS / 1000} s.\n`,
            );
          }
          return EXIT_OK;
        } finally {
          await db.close();
        }
      }),
    );
  return command;
}
