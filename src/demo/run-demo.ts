/**
 * `pricing-agent demo`: the agent's main job end to end on one machine, with nothing from the user and no network
 * but loopback.
 *
 *   sandbox (in-process, 300 approvals over 6 stores) -> demo folder: config, key file, four sample drops
 *   -> the daemon (new Agent, as `run` starts it): claims, sends, reports and archives the files; pulls the
 *      approved prices into the outbox, acknowledges them, writes per-store files
 *   -> the platform changes (approval-steps.ts), the daemon catches up
 *   -> the daemon's /readyz -> (with --serve: the web console, until Ctrl-C) -> drain -> summary with checks
 *      (demo-summary.ts)
 *
 * Everything stays in one folder (printed). What happens to it afterwards is the caller's choice (`--clean`).
 */
import { constants, createWriteStream } from 'node:fs';
import { access, mkdir, mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import { loadConfig, type Config } from '../config/index.ts';
import { Agent } from '../daemon/agent.ts';
import { createLogger, type Logger } from '../log.ts';
import { startSandbox } from '../sandbox/index.ts';
import { checkDaemon } from '../status/daemon-probe.ts';
import { openStateDb, stateLocation } from '../store/open-state-db.ts';
import { countFinishedFiles } from '../store/push-ledger-views.ts';
import type { StateDb } from '../store/state-db.ts';
import { changePlatform, waitForRound } from './approval-steps.ts';
import { demoLayout, writeDemoConfig, type DemoLayout } from './demo-config.ts';
import { demoSummary, type DemoSummary } from './demo-summary.ts';
import { sampleFiles, type SampleFile } from './sample-files.ts';
import { UsageError } from '../usage-error.ts';

export const DEMO_APPROVALS = 300;
export const DEMO_STORES = 6;
/** The files must be done well within this; on a slow CI runner they take a few seconds. */
export const FILES_TIMEOUT_MS = 30 * 1000; // 30 s

export class DemoUsageError extends UsageError {
  constructor(message: string) {
    super('DEMO_DIR_NOT_EMPTY', message);
  }
}

export interface DemoOptions {
  /** The folder to use: created when missing, must be empty. Default: a new folder in the system's temp dir. */
  readonly dir?: string;
  /** One line per step, for people (stderr). */
  readonly say?: (text: string) => void;
  /**
   * Called once the agent has caught up, with the address of its web console, before the agent and the sandbox
   * stop; they run until it resolves (`demo --serve`: until Ctrl-C; `npm run screenshots`: while it takes them).
   */
  readonly whileRunning?: (consoleUrl: string, context: { readonly db: StateDb; readonly layout: DemoLayout }) => Promise<void>;
}

async function prepareDir(dir: string | undefined): Promise<string> {
  if (dir === undefined) return mkdtemp(join(tmpdir(), 'pricing-agent-demo-'));
  const target = resolve(dir);
  // A folder that cannot be made or written (a read-only mount, another user's): one sentence, not the stack trace
  // of the first write (the agent's log file) that fails in it.
  const unusable = (error: unknown) => new DemoUsageError(`${target} cannot be used (${(error as NodeJS.ErrnoException).code ?? String(error)}): give a folder you can write (--dir), or leave --dir out`);
  await mkdir(target, { recursive: true, mode: 0o750 }).catch((error: unknown) => Promise.reject(unusable(error)));
  const entries = await readdir(target);
  if (entries.length > 0) throw new DemoUsageError(`${target} is not empty: give an empty or new folder (--dir), or leave --dir out`);
  await access(target, constants.W_OK).catch((error: unknown) => Promise.reject(unusable(error)));
  return target;
}

async function dropFiles(layout: DemoLayout, samples: readonly SampleFile[]): Promise<void> {
  for (const sample of samples) {
    const inbox = layout.inboxes[sample.source];
    if (inbox === undefined) throw new Error(`no inbox for ${sample.source}`);
    await writeFile(join(inbox, sample.name), sample.content, { mode: 0o640 });
    // The done marker says "complete" at once, as an ERP that writes markers would.
    await writeFile(join(inbox, `${sample.name}.done`), '');
  }
}

/** Waits until every sample has left processing/ (the daemon works meanwhile; this only reads the ledger). */
async function waitForFiles(db: StateDb, count: number): Promise<void> {
  const deadline = Date.now() + FILES_TIMEOUT_MS;
  while ((await countFinishedFiles(db)) < count) {
    if (Date.now() > deadline) throw new Error(`the sample files were not processed within ${FILES_TIMEOUT_MS / 1000} s: see the agent log`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function runDemo(options: DemoOptions = {}): Promise<DemoSummary> {
  const say = options.say ?? (() => undefined);
  const started = Date.now();
  const layout = demoLayout(await prepareDir(options.dir));
  say(`demo folder: ${layout.dir}`);
  const sandbox = await startSandbox({ approvals: DEMO_APPROVALS, stores: DEMO_STORES, largeGridRows: 0 });
  const logStream = createWriteStream(layout.logFile, { flags: 'a', mode: 0o640 });
  const logger: Logger = createLogger({ level: 'info', destination: logStream });
  let agent: Agent | null = null;
  let db: StateDb | null = null;
  try {
    say(`sandbox API on ${sandbox.url} (${DEMO_APPROVALS} approvals over ${DEMO_STORES} stores)`);
    await writeDemoConfig(layout, sandbox.url, sandbox.apiKey);
    const config: Config = await loadConfig(layout.configFile, {}, { logger });
    const samples = sampleFiles(sandbox.control.stores, new Date());
    await dropFiles(layout, samples);
    say(`dropped ${samples.length} files into the inboxes; starting the agent (log: ${layout.logFile})`);
    agent = new Agent({ config, logger });
    await agent.start();
    const state = await openStateDb(config.state, { readonly: true });
    db = state;
    await waitForFiles(state, samples.length);
    say('files processed; waiting for the approved prices in the outbox');
    await waitForRound(state, sandbox.control, [], 'the first pull');
    const changes = await changePlatform(state, sandbox.control);
    say(`the platform amended ${changes.amended.length}, cancelled ${changes.cancelled.length} and approved ${changes.injected} more; waiting for the agent to catch up`);
    await waitForRound(state, sandbox.control, changes.cancelled, 'the pull of the changes');
    const url = agent.httpUrl;
    const daemon = await checkDaemon(config, url === null ? undefined : `${url}/readyz`);
    if (options.whileRunning && url !== null) await options.whileRunning(`${url}/`, { db, layout });
    say('stopping the agent');
    await agent.stop();
    agent = null;
    return await demoSummary({ db: state, layout, database: stateLocation(config.state), samples, changes, control: sandbox.control, daemon, durationMs: Date.now() - started });
  } finally {
    await agent?.stop();
    await db?.close();
    await sandbox.close();
    logStream.end();
    await finished(logStream).catch(() => undefined);
  }
}
