/**
 * The `pricing-agent` program: each command lives in its own module under src/cli/commands/ and exports a factory
 * that returns a commander Command; this file loads the one asked for and runs it. No business logic here.
 * It is loaded by src/cli/main.ts once the Node.js version is known to be supported.
 */
import { Command, CommanderError } from 'commander';
import { AGENT_VERSION } from '../../version.ts';
import { EXIT_CONFIG, EXIT_OK } from './exit-codes.ts';
import { COMMAND_LOADERS, commandsToLoad } from './command-loaders.ts';
import { EXIT_TABLE, exitHelp, type CommandName } from './exit-table.ts';

/** The program with the commands `argv` needs (commandsToLoad). */
export async function buildProgram(argv: readonly string[] = process.argv.slice(2)): Promise<Command> {
  const program = new Command('pricing-agent')
    .description('On-premises sync agent for the Pricing Data Public API')
    .version(AGENT_VERSION)
    .showHelpAfterError()
    .configureHelp({ sortSubcommands: true });
  for (const command of await Promise.all(commandsToLoad(argv).map((name) => COMMAND_LOADERS[name]()))) program.addCommand(command);
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
  await (await buildProgram()).parseAsync(process.argv);
} catch (error) {
  if (!(error instanceof CommanderError)) throw error;
  const informational = error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help';
  process.exitCode = informational ? EXIT_OK : EXIT_CONFIG;
}
