/**
 * The `pricing-agent` program: each command lives in its own module under src/cli/ and exports a factory that
 * returns a commander Command; this file only assembles them and runs the one asked for. No business logic here.
 * It is loaded by src/cli/main.ts once the Node.js version is known to be supported.
 */
import { Command, CommanderError } from 'commander';
import { AGENT_VERSION } from '../../version.ts';
import { apiCommand } from './api.ts';
import { checkCommand } from './check.ts';
import { configCommand } from './config.ts';
import { demoCommand } from './demo.ts';
import { filesCommand } from './files.ts';
import { exportsCommand } from './exports.ts';
import { jobsCommand } from './jobs.ts';
import { outboxCommand } from './outbox.ts';
import { pullCommand } from './pull.ts';
import { runCommandDefinition } from './run.ts';
import { pushCommand } from './push.ts';
import { sandboxCommand } from './sandbox.ts';
import { sourcesCommand } from './sources.ts';
import { stateCommand } from './state.ts';
import { statusCommand } from './status.ts';
import { EXIT_CONFIG, EXIT_OK } from '../../exit-codes.ts';
import { EXIT_TABLE, exitHelp, type CommandName } from './exit-table.ts';

export function buildProgram(): Command {
  const program = new Command('pricing-agent')
    .description('On-premises sync agent for the Pricing Data Public API')
    .version(AGENT_VERSION)
    .showHelpAfterError()
    .configureHelp({ sortSubcommands: true });
  // Commands are registered here, one line each (see the modules in src/cli/).
  program.addCommand(checkCommand());
  program.addCommand(configCommand());
  program.addCommand(runCommandDefinition());
  program.addCommand(pushCommand());
  program.addCommand(pullCommand());
  program.addCommand(outboxCommand());
  program.addCommand(exportsCommand());
  program.addCommand(jobsCommand());
  program.addCommand(sandboxCommand());
  program.addCommand(sourcesCommand());
  program.addCommand(statusCommand());
  program.addCommand(filesCommand());
  program.addCommand(stateCommand());
  program.addCommand(demoCommand());
  program.addCommand(apiCommand());
  exitOverrideEverywhere(program);
  addExitHelp(program);
  return program;
}

/** Every command that does something prints its exit codes after its help, from the one table (src/cli/commands/exit-table.ts). */
function addExitHelp(command: Command, path = ''): void {
  for (const sub of command.commands) {
    const name = `${path}${sub.name()}`;
    if (name in EXIT_TABLE) {
      const own = exitHelp(name as CommandName);
      const dryRun = `push --dry-run` satisfies CommandName;
      sub.addHelpText('after', name === 'push' ? `${own}\n\nWith --dry-run:${exitHelp(dryRun).replace('\nExit codes:', '')}` : own);
    }
    addExitHelp(sub, `${name} `);
  }
}

/** Commands added with addCommand do not inherit exitOverride: set it on every one. */
function exitOverrideEverywhere(command: Command): void {
  command.exitOverride();
  for (const sub of command.commands) exitOverrideEverywhere(sub);
}

/**
 * Exit codes: commander's own usage errors (unknown option, missing argument) exit 2, like a config mistake;
 * --help and --version exit 0; everything else is set by the command (see src/cli/errors.ts).
 */
try {
  await buildProgram().parseAsync(process.argv);
} catch (error) {
  if (!(error instanceof CommanderError)) throw error;
  const informational = error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help';
  process.exitCode = informational ? EXIT_OK : EXIT_CONFIG;
}
