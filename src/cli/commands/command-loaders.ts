/**
 * The top-level commands by name, each loaded only when asked for (src/cli/commands/program.ts assembles them).
 */
import type { Command } from 'commander';

/**
 * Each top-level command by its name, loaded when asked for: a command loads its own modules and nothing else, so
 * `files list` does not load the HTTP client, the PostgreSQL driver, the metrics or the scheduler (a start took about
 * 1 s with every command loaded, and every CLI call in a script or a test paid it).
 */
export const COMMAND_LOADERS = {
  api: () => import('./api.ts').then((m) => m.apiCommand()),
  check: () => import('./check.ts').then((m) => m.checkCommand()),
  config: () => import('./config.ts').then((m) => m.configCommand()),
  demo: () => import('./demo.ts').then((m) => m.demoCommand()),
  exports: () => import('./exports.ts').then((m) => m.exportsCommand()),
  files: () => import('./files.ts').then((m) => m.filesCommand()),
  jobs: () => import('./jobs.ts').then((m) => m.jobsCommand()),
  outbox: () => import('./outbox.ts').then((m) => m.outboxCommand()),
  pull: () => import('./pull.ts').then((m) => m.pullCommand()),
  push: () => import('./push.ts').then((m) => m.pushCommand()),
  run: () => import('./run.ts').then((m) => m.runCommandDefinition()),
  sandbox: () => import('./sandbox.ts').then((m) => m.sandboxCommand()),
  sources: () => import('./sources.ts').then((m) => m.sourcesCommand()),
  state: () => import('./state.ts').then((m) => m.stateCommand()),
  status: () => import('./status.ts').then((m) => m.statusCommand()),
} satisfies Record<string, () => Promise<Command>>;

export type CommandLoaderName = keyof typeof COMMAND_LOADERS;
const isCommandName = (name: string | undefined): name is CommandLoaderName => name !== undefined && Object.hasOwn(COMMAND_LOADERS, name);

/**
 * The commands a command line needs: the one its first word names, or every one when it names none it knows (the
 * overall help, `help NAME` and a mistyped command, whose error suggests the nearest name, need them all); none
 * for --version.
 */
export function commandsToLoad(argv: readonly string[]): CommandLoaderName[] {
  const first = argv[0];
  if (isCommandName(first)) return [first];
  if (first === '--version' || first === '-V') return [];
  return Object.keys(COMMAND_LOADERS) as CommandLoaderName[];
}
