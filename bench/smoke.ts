/**
 * `npm run bench:smoke`: every benchmark at a tiny size, one after another, each checked for its result line
 * (`bench:<name> key=value ...`, the line docs/performance.md reads its figures from). A bench that no longer runs, or
 * no longer prints its line, fails here, and `npm test` runs this (test/bench/smoke.test.ts), so it fails CI rather
 * than the next person who measures. The figures of such tiny runs mean nothing and are not judged.
 *
 * The compiled tree the benches run (bench/compiled.ts) is built once for all of them.
 *
 *   node bench/smoke.ts [--only NAME,...]
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { compileInto } from './compiled.ts';

/** Each bench with the smallest arguments that still take it through every phase, and the keys its line must have. */
export const SMOKE_RUNS = [
  { name: 'sandbox', file: 'sandbox-ingest.ts', args: ['--rows', '4000'], keys: ['rows', 'rows_per_s', 'failed', 'sandbox_rss_mb'] },
  { name: 'push', file: 'push.ts', args: ['--rows', '2000', '--rounds', '1'], keys: ['agent', 'minimal', 'ratio', 'agent_rss_mb'] },
  { name: 'pull', file: 'pull.ts', args: ['--approvals', '1000', '--rounds', '1'], keys: ['agent', 'minimal', 'ratio', 'agent_rss_mb'] },
  { name: 'feed', file: 'feed.ts', args: ['--consumers', '5', '--approvals', '200', '--rounds', '1'], keys: ['consumers', 'p99_ms', 'rows_per_s', 'agent_rss_mb'] },
  { name: 'xlsx', file: 'xlsx.ts', args: ['--rows', '1000'], keys: ['rows', 'xlsx_rows_s', 'csv_rows_s', 'ratio', 'xlsx_rss_mb'] },
  { name: 'delta', file: 'delta.ts', args: ['--rows', '2000', '--repeat', '2'], keys: ['rows_sent_share', 'bytes_share', 'time_share', 'agent_rss_mb'] },
] as const;

export interface SmokeResult {
  readonly name: string;
  readonly ok: boolean;
  /** The result line, or why there is none. */
  readonly detail: string;
  readonly seconds: number;
}

/** The problem with a bench's output, or null when its last line is its result line with every key and a number each. */
export function resultLineProblem(name: string, keys: readonly string[], stdout: string): string | null {
  const last = stdout.trimEnd().split('\n').at(-1) ?? '';
  if (!last.startsWith(`bench:${name} `)) return `its last line is not "bench:${name} ...": ${JSON.stringify(last.slice(0, 200))}`;
  const pairs = new Map(last.split(' ').slice(1).map((pair) => pair.split('=') as [string, string | undefined]));
  const missing = keys.filter((key) => pairs.get(key) === undefined || !Number.isFinite(Number(pairs.get(key))));
  return missing.length === 0 ? null : `no number for ${missing.join(', ')} in "${last}"`;
}

const BENCH_DIR = fileURLToPath(new URL('.', import.meta.url));

async function runOne(run: (typeof SMOKE_RUNS)[number], build: string): Promise<SmokeResult> {
  const started = performance.now();
  const outcome = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [join(BENCH_DIR, run.file), ...run.args],
      { env: { ...process.env, PRICING_AGENT_BENCH_BUILD: build }, maxBuffer: 64 * 1024 * 1024, timeout: 240_000 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    );
  });
  const seconds = (performance.now() - started) / 1000;
  if (outcome.code !== 0) {
    const tail = outcome.stderr.trimEnd().split('\n').slice(-5).join(' | ');
    return { name: run.name, ok: false, detail: `exit ${outcome.code ?? 'by a signal'}: ${tail}`, seconds };
  }
  const problem = resultLineProblem(run.name, run.keys, outcome.stdout);
  return { name: run.name, ok: problem === null, detail: problem ?? outcome.stdout.trimEnd().split('\n').at(-1) ?? '', seconds };
}

/** Runs the benches named in `only` (all by default), one after another, on one compiled tree. */
export async function runSmoke(only?: readonly string[], progress: (result: SmokeResult) => void = () => undefined): Promise<SmokeResult[]> {
  const build = await mkdtemp(join(tmpdir(), 'pa-bench-smoke-'));
  try {
    await compileInto(build);
    const results: SmokeResult[] = [];
    for (const run of SMOKE_RUNS.filter((r) => only === undefined || only.includes(r.name))) {
      const result = await runOne(run, build);
      progress(result);
      results.push(result);
    }
    return results;
  } finally {
    await rm(build, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { only: { type: 'string' } } });
  const only = values.only?.split(',');
  const unknown = only?.filter((name) => !SMOKE_RUNS.some((r) => r.name === name)) ?? [];
  if (unknown.length > 0) {
    process.stderr.write(`--only: no bench named ${unknown.join(', ')} (known: ${SMOKE_RUNS.map((r) => r.name).join(', ')})\n`);
    process.exit(2);
  }
  const results = await runSmoke(only, (r) => process.stdout.write(`${r.ok ? 'ok  ' : 'FAIL'} ${r.name.padEnd(8)} ${r.seconds.toFixed(1).padStart(5)} s  ${r.detail}\n`));
  const failed = results.filter((r) => !r.ok);
  process.stdout.write(`bench:smoke ${results.length - failed.length} of ${results.length} benches printed their result line\n`);
  process.exit(failed.length === 0 ? 0 : 1);
}
