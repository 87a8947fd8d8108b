/**
 * `npm run test:chaos -- [--seed N] [--kills K] [--minutes M] [--files F] [--rows R] [--fault-rate P]
 * [--latency-ms L] [--tx-mode bulk|import] [--settle-timeout-s S] [--keep]`
 *
 * Runs the chaos scenario (runner.ts), prints its results table, and exits 1 when a check failed (the run's folder
 * is then kept for inspection), 2 for bad arguments. Defaults: the CI run (about 1 minute of chaos).
 * A long run: `npm run test:chaos -- --minutes 30 --kills 120 --files 600`.
 */
import { parseArgs } from 'node:util';
import { formatTable } from './checks.ts';
import { CHAOS_DEFAULTS, runChaos, type ChaosOptions } from './runner.ts';

function number(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a number >= 0 (got ${value})`);
  return n;
}

function options(argv: string[]): ChaosOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      seed: { type: 'string' },
      kills: { type: 'string' },
      minutes: { type: 'string' },
      files: { type: 'string' },
      rows: { type: 'string' },
      'fault-rate': { type: 'string' },
      'latency-ms': { type: 'string' },
      'tx-mode': { type: 'string' },
      'settle-timeout-s': { type: 'string' },
      keep: { type: 'boolean' },
    },
  });
  const d = CHAOS_DEFAULTS;
  const txMode = values['tx-mode'] ?? d.txMode;
  if (txMode !== 'bulk' && txMode !== 'import') throw new Error('--tx-mode must be bulk or import');
  const faultRate = number(values['fault-rate'], 'fault-rate', d.faultRate);
  if (faultRate > 1) throw new Error('--fault-rate is a share of requests, at most 1');
  return {
    seed: Math.trunc(number(values.seed, 'seed', d.seed)),
    kills: Math.trunc(number(values.kills, 'kills', d.kills)),
    durationMs: Math.round(number(values.minutes, 'minutes', d.durationMs / 60_000) * 60_000),
    files: Math.trunc(number(values.files, 'files', d.files)),
    rows: Math.max(1, Math.trunc(number(values.rows, 'rows', d.rows))),
    faultRate,
    latencyMs: Math.trunc(number(values['latency-ms'], 'latency-ms', d.latencyMs)),
    txMode,
    settleTimeoutMs: number(values['settle-timeout-s'], 'settle-timeout-s', d.settleTimeoutMs / 1000) * 1000,
    keep: values.keep ?? false,
    progress: (line) => process.stderr.write(`${line}\n`),
  };
}

let parsed: ChaosOptions;
try {
  parsed = options(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}
const started = Date.now();
const result = await runChaos(parsed);
process.stdout.write(`${formatTable(result.checks)}\n`);
process.stdout.write(`\n${result.ok ? 'all checks passed' : 'SOME CHECKS FAILED'} in ${Math.round((Date.now() - started) / 1000)} s${result.ok && !parsed.keep ? '' : `; run folder kept: ${result.dir}`}\n`);
process.exit(result.ok ? 0 : 1);
