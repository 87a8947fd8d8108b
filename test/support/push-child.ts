/**
 * `pricing-agent push` as a child process for crash tests: started, watched through its state database (what it
 * committed, never a timer) and SIGKILLed.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { expect } from 'vitest';
import { CLI_MAIN } from './run-cli.ts';
import { until } from './test-logger.ts';

export interface AgentRun {
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
  kill(): Promise<void>;
  running(): boolean;
}

export function startAgent(args: string[], apiKey: string): AgentRun {
  const env = { ...process.env, PRICING_API_KEY: apiKey, PRICING_AGENT_CONFIG: undefined, PRICING_AGENT_DEBUG: undefined };
  const child = spawn(process.execPath, [CLI_MAIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let done = false;
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) => {
    child.on('close', (code, signal) => {
      done = true;
      resolve({ code, signal, stdout, stderr });
    });
  });
  return {
    exited,
    running: () => !done,
    async kill() {
      child.kill('SIGKILL');
      const end = await exited;
      expect(end.signal, `the agent ended before it was killed: ${end.stdout}${end.stderr}`).toBe('SIGKILL');
    },
  };
}

export interface LedgerView {
  /** Committed batches of the latest file. */
  batches: number;
  status: string | null;
  started: boolean;
  jobId: string | null;
}

/** What the agent committed so far for its latest file, through a short-lived read-only connection. */
export function ledger(dbPath: string): LedgerView {
  if (!existsSync(dbPath)) return { batches: 0, status: null, started: false, jobId: null };
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const file = db.prepare('SELECT id, status, started_at, job_id FROM push_files ORDER BY id DESC LIMIT 1').get() as
      | { id: number; status: string; started_at: string | null; job_id: string | null }
      | undefined;
    if (file === undefined) return { batches: 0, status: null, started: false, jobId: null };
    const { n } = db.prepare('SELECT count(*) AS n FROM push_batches WHERE file_id = ?').get(file.id) as { n: number };
    return { batches: n, status: file.status, started: file.started_at != null, jobId: file.job_id };
  } catch {
    return { batches: 0, status: null, started: false, jobId: null }; // the agent is still creating its tables
  } finally {
    db.close();
  }
}

/** Waits until `condition` holds for what the agent committed; fails at once if the agent ended instead. */
export async function waitForLedger(agent: AgentRun, dbPath: string, what: string, condition: (l: LedgerView) => boolean): Promise<LedgerView> {
  let seen = ledger(dbPath);
  await until(() => {
    if (!agent.running()) throw new Error(`the agent ended before ${what}`);
    seen = ledger(dbPath);
    return condition(seen);
  }, what, 60_000);
  return seen;
}
