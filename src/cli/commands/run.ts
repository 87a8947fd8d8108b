/**
 * `pricing-agent run`: the daemon. Logs JSON lines on stdout (journald, Docker). Signals:
 * - SIGTERM / SIGINT: drain (stop taking work, finish and checkpoint what is in flight, close the database) and exit
 *   0; if that takes longer than daemon.shutdown_timeout_ms, exit 1 anyway (work in flight resumes at the next start).
 * - a second SIGTERM / SIGINT: exit at once (1).
 * - SIGHUP: reload the config; an invalid new config is refused (logged) and the running one stays.
 * Exit codes: 0 stopped cleanly, 1 failed or drain timed out, 2 config error.
 */
import { resolve } from 'node:path';
import { Command } from 'commander';
import { Agent } from '../../daemon/agent.ts';
import { createLogger } from '../../log.ts';
import { configOption, loadConfigForCommand } from './config.ts';
import { runCommand } from './errors.ts';
import { checkSources } from '../../ingest/operations/push-target.ts';
import { lockState } from '../../store/state-lock.ts';

interface RunOptions {
  readonly config: string;
}

export function runCommandDefinition(): Command {
  return new Command('run')
    .description('run the agent: watch the inboxes, pull on schedule, serve /healthz /readyz /metrics')
    .addOption(configOption())
    .action(
      runCommand(async (options: RunOptions) => {
        // A source that cannot work (a default its field cannot take) stops the start, as `config validate` says.
        const load = async () => {
          const loaded = await loadConfigForCommand(options.config);
          checkSources(loaded, resolve(options.config));
          return loaded;
        };
        const config = await load();
        const logger = createLogger({ level: config.log.level, pretty: config.log.pretty });
        // Held until the process ends (the system drops it then, whatever the end): a second daemon on this state
        // stops here instead of pulling and acknowledging into the same database.
        const releaseLock = lockState(config.state, 'stop it first, or give this agent a state.dir of its own (one agent per state)');
        const agent = new Agent({ config, logger, reloadConfig: load });
        let stopping = false;
        const stopped = new Promise<number>((resolve) => {
          const onStop = (signal: NodeJS.Signals) => {
            if (stopping) {
              logger.warn({ signal }, 'second stop signal: exiting now; work in flight resumes at the next start');
              process.exit(1);
            }
            stopping = true;
            logger.info({ signal }, 'stop signal received');
            const timeout = setTimeout(() => {
              logger.error({ timeout_ms: config.daemon.shutdown_timeout_ms }, 'drain timed out: exiting; work in flight resumes at the next start');
              process.exit(1);
            }, config.daemon.shutdown_timeout_ms);
            timeout.unref();
            agent.stop().then(
              () => resolve(0),
              (error: unknown) => {
                logger.error({ error: String(error) }, 'stop failed');
                resolve(1);
              },
            );
          };
          process.on('SIGTERM', onStop);
          process.on('SIGINT', onStop);
        });
        process.on('SIGHUP', () => {
          logger.info('SIGHUP: reloading the config');
          void agent.reload();
        });
        try {
          await agent.start();
        } catch (error) {
          logger.fatal({ error: error instanceof Error ? error.message : String(error) }, 'the agent could not start');
          throw error;
        }
        const code = await stopped;
        releaseLock(); // after the drain closed the database (and a reference to the lock until then)
        return code;
      }),
    );
}
