#!/usr/bin/env -S node --max-semi-space-size=8 --max-old-space-size=1536
/**
 * The `pricing-agent` command. Each command lives in its own module under src/cli/ and exports a factory that
 * returns a commander Command; this file only assembles them. No business logic here.
 *
 * The shebang (and the systemd unit, the systemd CLI wrapper and the Docker entrypoint) size Node's heap for the
 * agent instead of for the host: V8 sizes the young generation from the host's memory and lets the old generation
 * grow to four times its live data between collections when the heap limit is 2 GB or more. On a 24 GB server a
 * 1M-row push peaked near 350 MB with the defaults, 225-258 MB with a young generation of 8 MiB, and 156-169 MB
 * with the old generation capped at 1.5 GB as well (V8 then grows it by about 1.8x), for about 3 % more CPU in
 * collections. 1.5 GB is far above what the agent holds (its memory does not grow with file size); a process that
 * reached it would be stopped by Node and restarted by its supervisor rather than take the host's memory.
 */
import { Command, CommanderError } from 'commander';
import { AGENT_VERSION } from '../version.ts';
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
import { statusCommand } from './status.ts';

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
  program.addCommand(statusCommand());
  program.addCommand(filesCommand());
  program.addCommand(demoCommand());
  exitOverrideEverywhere(program);
  return program;
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
  process.exitCode = informational ? 0 : 2;
}
