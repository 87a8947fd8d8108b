/**
 * `pricing-agent sandbox`: serves the embedded API simulator (docs/sandbox.md) until SIGINT or SIGTERM, then exits
 * 0. Prints exactly two lines on stdout, `PRICING_API_URL=...` and `PRICING_API_KEY=...`, so a script can read
 * them; the human hints go to stderr.
 */
import { Command, InvalidArgumentError } from 'commander';
import { DEFAULT_CLI_PACE, DIALECT_NAMES, DIALECTS, SANDBOX_DEFAULTS, startSandbox, type DialectName, type JobPace } from '../../sandbox/index.ts';
import { runCommand } from './errors.ts';

/** The CLI's fixed default port, so that a demo config can name it; `--port 0` picks a free one. */
export const SANDBOX_CLI_PORT = 8787;

interface SandboxCliOptions {
  readonly port: number;
  readonly host: string;
  readonly seed: number;
  readonly approvals: number;
  readonly jobPace: JobPace;
  readonly dialect: DialectName;
}

function dialect(raw: string): DialectName {
  const name = DIALECT_NAMES.find((d) => d === raw.trim());
  if (name === undefined) throw new InvalidArgumentError(`expected one of ${DIALECT_NAMES.join(', ')}`);
  return name;
}

function integer(min: number, max: number): (raw: string) => number {
  return (raw) => {
    const value = Number(raw);
    if (!/^\d+$/.test(raw.trim()) || value < min || value > max) {
      throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
    }
    return value;
  };
}

/** "instant", or "<rows>/<ms>": that many rows per tick of that many milliseconds (also the queued time). */
function jobPace(raw: string): JobPace {
  if (raw === 'instant') return 'instant';
  const match = /^(\d+)\/(\d+)$/.exec(raw.trim());
  if (!match) throw new InvalidArgumentError('expected "instant" or "<rows>/<ms>", e.g. 10000/1000');
  const rowsPerTick = Number(match[1]);
  const tickMs = Number(match[2]);
  if (rowsPerTick < 1) throw new InvalidArgumentError('rows per tick must be at least 1');
  return { queuedMs: tickMs, tickMs, rowsPerTick };
}

function waitForStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

export function sandboxCommand(): Command {
  return new Command('sandbox')
    .description('serve a local simulator of the Pricing Data Public API (for trials and tests)')
    .option('--port <n>', 'port to listen on (0: a free port)', integer(0, 65_535), SANDBOX_CLI_PORT)
    .option('--host <address>', 'address to listen on', SANDBOX_DEFAULTS.host)
    .option('--seed <n>', 'seed of the generated data (same seed, same data)', integer(0, 2 ** 31 - 1), SANDBOX_DEFAULTS.seed)
    .option('--approvals <n>', 'approved prices seeded at start', integer(0, 1_000_000), SANDBOX_DEFAULTS.approvals)
    .option('--job-pace <pace>', 'import job pace: "instant" or "<rows>/<ms>"', jobPace, DEFAULT_CLI_PACE)
    .option('--dialect <name>', `the reading of the API document to play: ${DIALECT_NAMES.join(', ')}`, dialect, 'default')
    .addHelpText(
      'after',
      `\nDialects (docs/sandbox.md has the table of every choice):\n${DIALECT_NAMES.map((d) => `  ${d.padEnd(8)} ${DIALECTS[d].summary}`).join('\n')}`,
    )
    .action(
      runCommand(async (options: SandboxCliOptions) => {
        const sandbox = await startSandbox({
          port: options.port,
          host: options.host,
          seed: options.seed,
          approvals: options.approvals,
          jobPace: options.jobPace,
          dialect: options.dialect,
        });
        // Listen for Ctrl-C before saying where it serves: whoever reads that line may stop it at once.
        const stopSignal = waitForStopSignal();
        process.stdout.write(`PRICING_API_URL=${sandbox.url}\nPRICING_API_KEY=${sandbox.apiKey}\n`);
        process.stderr.write(
          `sandbox: serving on ${sandbox.url} (seed ${options.seed}, dialect ${options.dialect}); control plane at ${sandbox.url}/_sandbox/; ` +
            'stop with Ctrl-C\n',
        );
        // A first store price file needs store ids the platform knows: a few of them, so nobody has to read the state.
        const stores = sandbox.control.stores;
        const more = stores.length > 3 ? ` and ${stores.length - 3} more (all in ${sandbox.url}/_sandbox/state)` : '';
        process.stderr.write(`sandbox: store ids ${stores.slice(0, 3).join(', ')}${more}\n`);
        const signal = await stopSignal;
        process.stderr.write(`sandbox: ${signal}, stopping\n`);
        await sandbox.close();
        return 0;
      }),
    );
}
