/**
 * `pricing-agent demo [--dir D] [--clean] [--json] [--serve]`: the main job on an embedded default (src/demo/run-demo.ts),
 * with no network and no configuration from the user. Progress lines go to stderr; the summary (or with --json one
 * JSON object) to stdout.
 *
 * The demo folder is kept by default: the summary points into it (reports, rejects, the outbox database, per-store
 * files, a config that `status` and `files` read). `--clean` removes it at the end (CI).
 *
 * Exit codes: 0 every check of the summary passed; 1 a check failed or the demo could not run; 2 a usage mistake
 * (--dir not empty).
 */
import { rm } from 'node:fs/promises';
import { Command } from 'commander';
import { runDemo } from '../../demo/run-demo.ts';
import { runCommand } from './errors.ts';
import { demoText, invokedAs } from './demo-text.ts';

interface DemoCliOptions {
  readonly dir?: string;
  readonly clean?: boolean;
  readonly json?: boolean;
  readonly serve?: boolean;
}

/** `--serve`: the console's address on stderr, then wait for Ctrl-C (or SIGTERM). */
async function serveUntilInterrupted(url: string): Promise<void> {
  process.stderr.write(`demo: the agent is running with its web console at ${url} (open it in a browser); Ctrl-C stops it and prints the summary\n`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

export function demoCommand(): Command {
  return new Command('demo')
    .description('run the whole agent against a built-in sandbox: sample files in, approved prices out (no network, no config)')
    .option('--dir <folder>', 'use this folder (new or empty) instead of a new one in the temp dir')
    .option('--clean', 'remove the demo folder at the end (it is kept by default, to look around)')
    .option('--json', 'print the summary as one JSON object')
    .option('--serve', 'once the agent has caught up, keep it running with its web console until Ctrl-C')
    .addHelpText(
      'after',
      '\nStarts the sandbox in this process, writes a config and four sample files (a Windows-1252 ERP export and\n' +
        'friends), runs the agent until the files are sent and the approved prices are in the outbox, then checks\n' +
        'the result against the sandbox and prints where to look. Takes a few seconds.',
    )
    .action(
      runCommand(async (options: DemoCliOptions) => {
        const say = options.json === true ? undefined : (text: string) => process.stderr.write(`demo: ${text}\n`);
        const summary = await runDemo({
          ...(options.dir === undefined ? {} : { dir: options.dir }),
          ...(say ? { say } : {}),
          ...(options.serve === true ? { whileRunning: (url: string) => serveUntilInterrupted(url) } : {}),
        });
        const clean = options.clean === true;
        if (clean) await rm(summary.dir, { recursive: true, force: true });
        process.stdout.write(options.json === true ? `${JSON.stringify({ ...summary, kept: !clean }, null, 2)}\n` : demoText(summary, !clean, invokedAs()));
        return summary.ok ? 0 : 1;
      }),
    );
}
