/**
 * The program loads only the command it is asked for (src/cli/commands/command-loaders.ts): a loader under one name
 * that gave a command of another would make that name an unknown command.
 */
import { describe, expect, it } from 'vitest';
import { COMMAND_LOADERS, commandsToLoad } from '../../src/cli/commands/command-loaders.ts';
import { runCli } from '../support/run-cli.ts';

const ALL = Object.keys(COMMAND_LOADERS);

describe('the command loaders', () => {
  it('each gives the command of its own name', async () => {
    for (const [name, load] of Object.entries(COMMAND_LOADERS)) expect((await load()).name(), name).toBe(name);
  });

  it('load the command named, every command for help or a name they do not know, none for --version', () => {
    expect(commandsToLoad(['files', 'list'])).toEqual(['files']);
    expect(commandsToLoad(['run', '--config', 'x.yaml'])).toEqual(['run']);
    expect(commandsToLoad([])).toEqual(ALL);
    expect(commandsToLoad(['--help'])).toEqual(ALL);
    expect(commandsToLoad(['help', 'files'])).toEqual(ALL);
    expect(commandsToLoad(['fles'])).toEqual(ALL);
    expect(commandsToLoad(['toString'])).toEqual(ALL); // not a command, though every object has it
    expect(commandsToLoad(['--version'])).toEqual([]);
    expect(commandsToLoad(['-V'])).toEqual([]);
  });
});

describe('the program', () => {
  it('lists every command in its help, and suggests the nearest for a mistyped one', async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    for (const name of ALL) expect(help.stdout).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
    const typo = await runCli(['fles']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("(Did you mean files?)");
  });
});
