/**
 * `pricing-agent config validate|print`: check the configuration file, or show it as the agent resolved it
 * (defaults filled in, paths absolute, environment interpolated, secrets replaced by ***).
 */
import { resolve } from 'node:path';
import { Command, Option } from 'commander';
import { stringify } from 'yaml';
import { ConfigError, DEFAULT_CONFIG_FILE, loadConfig, redactConfig } from '../../config/index.ts';
import type { Config } from '../../config/index.ts';
import { checkSources } from '../../ingest/operations/push-target.ts';
import { createLogger } from '../../log.ts';
import { runCommand } from './errors.ts';

/** The `--config` option shared by every command that reads the configuration. */
export function configOption(): Option {
  return new Option('-c, --config <file>', 'configuration file')
    .env('PRICING_AGENT_CONFIG')
    .default(DEFAULT_CONFIG_FILE);
}

/**
 * Loads the config for a one-shot command. Load warnings (a key file others can read) go to stderr, so that
 * what the command prints on stdout stays machine-readable.
 */
export function loadConfigForCommand(file: string): Promise<Config> {
  if (file.trim() === '') {
    // `PRICING_AGENT_CONFIG=` (set, empty) replaced the default and named the working folder.
    return Promise.reject(new ConfigError(file, [], 'PRICING_AGENT_CONFIG is set but empty: unset it, or set it to the config file (or pass --config <file>).'));
  }
  const logger = createLogger({ level: 'warn', pretty: process.stderr.isTTY, destination: 2 });
  return loadConfig(file, process.env, { logger });
}

interface ConfigOptions {
  readonly config: string;
  readonly json?: boolean;
}

export function configCommand(): Command {
  const command = new Command('config').description('check or show the configuration file');

  command
    .command('validate')
    .description('check the configuration file; exit 0 when valid, 2 when not')
    .addOption(configOption())
    .action(
      runCommand(async (options: ConfigOptions) => {
        const config = await loadConfigForCommand(options.config);
        checkSources(config, resolve(options.config));
        process.stdout.write(`config OK: ${resolve(options.config)}\n`);
      }),
    );

  command
    .command('print')
    .description('print the configuration as the agent resolved it, with secrets replaced by ***')
    .addOption(configOption())
    .option('--json', 'print JSON instead of YAML')
    .action(
      runCommand(async (options: ConfigOptions) => {
        const config = redactConfig(await loadConfigForCommand(options.config));
        const text = options.json === true ? `${JSON.stringify(config, null, 2)}\n` : stringify(config);
        process.stdout.write(text);
      }),
    );

  return command;
}
