/**
 * `npm run test:chaos -- [--seed N] [--kills K] [--minutes M] [--files F] [--rows R] [--fault-rate P]
 * [--latency-ms L] [--tx-mode bulk|import] [--dialect NAME|all] [--settle-timeout-s S] [--keep] [--ha [--stops S]
 * [--lease-s L]]`
 *
 * Runs the chaos scenario (runner.ts), prints its results table, and exits 1 when a check failed (the run's folder
 * is then kept for inspection), 2 for bad arguments. Defaults: the CI run (about 1 minute of chaos).
 * A long run: `npm run test:chaos -- --minutes 30 --kills 120 --files 600`. --dialect: the reading of the API
 * document the sandbox plays (default, terse, strict, lenient: src/sandbox/dialect.ts); `--dialect all` runs the
 * scenario once against each, one after another (`npm test` runs the default dialect only: test/chaos/chaos.test.ts).
 *
 * --ha: the failover proof of an HA pair instead (ha-runner.ts), on a throwaway PostgreSQL cluster started for the
 * run (test/support/postgres-cluster.ts); --stops SIGSTOPs of the active past its lease (default 4), --lease-s its
 * lease (default 3). A long run: `npm run test:chaos -- --ha --minutes 10 --kills 40 --stops 12 --files 120`.
 */
import { parseArgs } from 'node:util';
// The runners are imported below, once the backend of the run is set (test/support/state-db.ts reads it when it is
// loaded); only types and the options come from them here.
import { CHAOS_DEFAULTS, type ChaosOptions } from './options.ts';
import { DIALECT_NAMES, type DialectName } from '../../src/sandbox/dialect.ts';
import type { ChaosResult } from './runner.ts';
import type { HaChaosOptions } from './ha-runner.ts';

function number(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a number >= 0 (got ${value})`);
  return n;
}

function options(argv: string[]): HaChaosOptions & { ha: boolean; dialects: readonly DialectName[] } {
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
      dialect: { type: 'string' },
      'settle-timeout-s': { type: 'string' },
      keep: { type: 'boolean' },
      ha: { type: 'boolean' },
      stops: { type: 'string' },
      'lease-s': { type: 'string' },
    },
  });
  const d = CHAOS_DEFAULTS;
  const ha = values.ha ?? false;
  const txMode = values['tx-mode'] ?? (ha ? 'bulk' : d.txMode);
  if (txMode !== 'bulk' && txMode !== 'import') throw new Error('--tx-mode must be bulk or import');
  const named = DIALECT_NAMES.find((n) => n === (values.dialect ?? d.dialect));
  if (values.dialect !== 'all' && named === undefined) {
    throw new Error(`--dialect must be all or one of ${DIALECT_NAMES.join(', ')} (got ${values.dialect})`);
  }
  const dialects: readonly DialectName[] = named === undefined ? DIALECT_NAMES : [named];
  const dialect = dialects[0] ?? d.dialect;
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
    dialect,
    dialects,
    settleTimeoutMs: number(values['settle-timeout-s'], 'settle-timeout-s', d.settleTimeoutMs / 1000) * 1000,
    keep: values.keep ?? false,
    progress: (line) => process.stderr.write(`${line}\n`),
    ha,
    stops: Math.trunc(number(values.stops, 'stops', 4)),
    leaseS: Math.trunc(number(values['lease-s'], 'lease-s', 3)),
  };
}

let parsed: ReturnType<typeof options>;
try {
  parsed = options(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}
const started = Date.now();
// Before anything loads test/support/state-db.ts (checks.ts does): it reads the backend once.
if (parsed.ha) process.env['PRICING_AGENT_TEST_BACKEND'] = 'postgres';
const { formatTable } = await import('./checks.ts');
const results: { dialect: DialectName; result: ChaosResult }[] = [];
if (parsed.ha) {
  const { createTemplate, removeTemplate } = await import('../support/postgres-cluster.ts');
  const { stopTestCluster, useClusterTemplate } = await import('../support/state-db.ts');
  const template = createTemplate();
  try {
    useClusterTemplate(template);
    const { runHaChaos } = await import('./ha-runner.ts');
    results.push({ dialect: parsed.dialect, result: await runHaChaos(parsed) });
  } finally {
    await stopTestCluster();
    removeTemplate(template);
  }
} else {
  const { runChaos } = await import('./runner.ts');
  for (const dialect of parsed.dialects) {
    if (parsed.dialects.length > 1) process.stdout.write(`\n## dialect ${dialect}\n`);
    results.push({ dialect, result: await runChaos({ ...parsed, dialect } satisfies ChaosOptions) });
    process.stdout.write(`${formatTable(results.at(-1)?.result.checks ?? [])}\n`);
  }
}
if (parsed.ha) process.stdout.write(`${formatTable(results[0]?.result.checks ?? [])}\n`);
const failed = results.filter((r) => !r.result.ok);
const seconds = Math.round((Date.now() - started) / 1000);
for (const { dialect, result } of results) {
  if (!result.ok || parsed.keep) process.stdout.write(`run folder kept (${dialect}): ${result.dir}\n`);
}
process.stdout.write(`\n${failed.length === 0 ? 'all checks passed' : `SOME CHECKS FAILED (${failed.map((f) => f.dialect).join(', ')})`} in ${seconds} s\n`);
process.exit(failed.length === 0 ? 0 : 1);
