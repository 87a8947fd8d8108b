/**
 * `pricing-agent push FILE (--source NAME | --entity E) [--mode bulk|import] [--dry-run] [--force] [--json]`: one
 * file through the same pipeline as the watched folders, now, with a progress bar on a TTY and a summary at the end.
 * This file parses flags and prints; which folders and reading options apply: src/ingest/operations/push-target.ts; resume,
 * claim or copy: src/ingest/operations/one-shot-push.ts; the dry run: src/ingest/operations/dry-run.ts; exit codes:
 * src/ingest/file/file-verdict.ts.
 *
 * Output: the summary (or with --json one JSON object) on stdout; progress, notes and the agent's log lines (only
 * at log.level debug or trace: the summary says what they would) on stderr.
 *
 * Ctrl-C (SIGINT) or SIGTERM stops after the batches in flight are answered and committed; the file stays in
 * processing/ and the same command resumes it. A second signal exits at once (the next run still resumes it).
 */
import { basename, join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import type { Config } from '../../config/index.ts';
import { dryRun, dryRunRejectsPath } from '../../ingest/operations/dry-run.ts';
import { exitCodeOf, exitCodeOfResult } from './exit-table.ts';
import { FileFormatError } from '../../ingest/read/errors.ts';
import { runPush } from '../../ingest/operations/one-shot-push.ts';
import { oneShotLogger, openOneShot } from '../../ingest/operations/one-shot-deps.ts';
import type { FileResult } from '../../ingest/file/push-file.ts';
import { resolveTarget, type PushTarget } from '../../ingest/operations/push-target.ts';
import { fileCounts } from '../../ingest/file/row-fate.ts';
import { deltaFile } from '../../store/delta-state.ts';
import { doneUnderOtherMapping, getFile } from '../../store/push-ledger.ts';
import type { StateDb } from '../../store/state-db.ts';
import { openStateDb } from '../../store/open-state-db.ts';
import { configOption, loadConfigForCommand } from './config.ts';
import { runCommand } from './errors.ts';
import { createProgress, type Progress } from './progress.ts';
import { dryRunExitCode, dryRunFailedJson, dryRunFailedText, dryRunJson, dryRunText, resultJson, resultText, type ResultView } from './push-summary.ts';

interface PushOptions {
  readonly config: string;
  readonly source?: string;
  readonly entity?: string;
  readonly mode?: string;
  readonly dryRun?: boolean;
  readonly rejects?: string;
  readonly force?: boolean;
  readonly full?: boolean;
  readonly json?: boolean;
}

/** SIGINT/SIGTERM: the first drains (no new batch), the second exits at once. Returns the remover. */
function onStopSignals(abort: AbortController, say: (text: string) => void): () => void {
  const stop = (signal: NodeJS.Signals): void => {
    if (abort.signal.aborted) process.exit(130);
    say(`${signal}: stopping after the batches in flight; the file stays in processing/ and the same push resumes it`);
    abort.abort(new Error(`interrupted (${signal})`));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  return () => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  };
}

/** The state database read-only for a dry run's comparison; null when the agent has not run here yet. */
async function readOnlyState(config: Config): Promise<StateDb | null> {
  return openStateDb(config.state, { readonly: true }).catch(() => null);
}

async function runDryRun(config: Config, target: PushTarget, file: string, options: PushOptions): Promise<number> {
  const progress = createProgress({ label: basename(file) });
  const { source } = target;
  const delta = source.delta?.enabled === true ? source.delta : null;
  const db = delta !== null ? await readOnlyState(config) : null;
  try {
    const result = await dryRun({
      ...(delta !== null
        ? {
            delta: {
              db,
              source: { name: source.name, entity: source.read.entity, delta, options: source.options ?? {}, duplicateKeys: source.read.duplicateKeys },
              full: options.full === true,
              scratchDir: join(config.state.dir, 'push', 'dry-run', `.compare-${process.pid}`),
              now: Date.now(),
            },
          }
        : {}),
      file,
      read: source.read,
      entity: source.read.entity,
      mode: source.mode,
      batchSize: source.batchSize,
      rejectsPath: options.rejects !== undefined ? resolve(options.rejects) : dryRunRejectsPath(config.state.dir, file),
      onProgress: (sample) => progress.update(sample),
    });
    progress.stop();
    const out = options.json === true ? `${JSON.stringify(dryRunJson(file, target.label, source.mode, result))}\n` : dryRunText(file, target.label, source.mode, result);
    process.stdout.write(out);
    return dryRunExitCode(result);
  } catch (error) {
    if (!(error instanceof FileFormatError)) throw error;
    progress.stop();
    const json = options.json === true;
    process.stdout.write(json ? `${JSON.stringify(dryRunFailedJson(file, target.label, error))}\n` : dryRunFailedText(file, target.label, error));
    return exitCodeOf('failed');
  } finally {
    progress.stop();
    await db?.close();
  }
}

async function view(db: StateDb, result: FileResult): Promise<ResultView> {
  if (!('file' in result)) return { result, counts: null };
  const { file } = result;
  const earlierId = result.outcome === 'duplicate' ? file.duplicate_of : null;
  const sentBy = earlierId === null ? null : ((await getFile(db, earlierId)) ?? null);
  const remappedFrom = result.outcome === 'done' || result.outcome === 'failed' ? await doneUnderOtherMapping(db, file) : null;
  return { result, counts: await fileCounts(db, file.id), sentBy, remappedFrom, delta: (await deltaFile(db, file.id)) ?? null };
}

async function runRealPush(config: Config, target: PushTarget, file: string, options: PushOptions): Promise<number> {
  const progress: Progress = createProgress({ label: basename(file) });
  const say = (text: string) => progress.note(text);
  const abort = new AbortController();
  const oneShot = await openOneShot(config, {
    logger: oneShotLogger(config),
    hooks: {
      onRetry: (e) => say(`API ${e.reason}; retry ${e.attempt + 1} in ${Math.ceil(e.delayMs / 1000)} s`),
      onRateLimited: (e) => say(`API rate limit: waited ${Math.ceil(e.waitMs / 1000)} s`),
      onKeyRejected: () => say('API key rejected (401)'),
    },
    signal: abort.signal,
    onProgress: (sample) => progress.update(sample),
    onPoll: (job) => say(`import job ${job.status}${job.phase === 'running' && job.progress != null ? `, ${job.progress}%` : ''}`),
  });
  const removeSignals = onStopSignals(abort, (text) => process.stderr.write(`\n${text}\n`));
  const { db } = oneShot.deps;
  try {
    const { main, resumed } = await runPush(oneShot.deps, target, file, { force: options.force === true, full: options.full === true });
    progress.stop();
    const views = { main: await view(db, main), resumed: await Promise.all(resumed.map((r) => view(db, r))) };
    if (options.json === true) {
      process.stdout.write(`${JSON.stringify({ ...resultJson(views.main), resumed: views.resumed.map(resultJson) })}\n`);
    } else {
      for (const other of views.resumed) process.stdout.write(`resumed (left unfinished earlier): ${resultText(other)}`);
      process.stdout.write(resultText(views.main));
    }
    return exitCodeOfResult(main);
  } finally {
    progress.stop();
    removeSignals();
    await oneShot.close();
  }
}

export function pushCommand(): Command {
  return new Command('push')
    .description('push one CSV file to the API now, through the same pipeline as the watched folders')
    .argument('<file>', 'the CSV file')
    .option('--source <name>', "a configured source: its encoding, mapping, mode, batch size and folders")
    .option('--entity <entity>', 'a file whose headers are API field names: products, product_store, transactions or competitor_prices')
    .addOption(new Option('--mode <mode>', "bulk or import (default: the source's mode; bulk for --entity)"))
    .option('--dry-run', 'read, map and validate only: write the rejects and count the rows that would be sent')
    .option('--rejects <file>', 'with --dry-run: where to write the rejects CSV (default <state.dir>/push/dry-run/)')
    .option('--force', 'send the file even if the same content was sent before')
    .option('--full', 'delta sources: send every row, also those the API already holds (and count it as a full send)')
    .option('--json', 'print the result as one JSON object')
    .addOption(configOption())
    .action(
      runCommand(async (file: string, options: PushOptions) => {
        const config = await loadConfigForCommand(options.config);
        const target = resolveTarget(config, resolve(options.config), options);
        const path = resolve(file);
        return options.dryRun === true ? runDryRun(config, target, path, options) : runRealPush(config, target, path, options);
      }),
    );
}
