/**
 * Crash safety of the pull: the agent runs as a child process (`pricing-agent pull --once`) against the sandbox and
 * is SIGKILLed at several points, found by watching its SQLite file read-only from here and the sandbox's state:
 *   1. before a page is stored: while its deliveries request is in flight, and after the platform handed it out
 *      but its answer was lost (the next run replays it by its request_id);
 *   2. after pages are stored, before their acknowledgement reached the platform;
 *   3. during the acknowledgements: a batch accepted by the platform whose answer was lost, never recorded (the
 *      next run finds those ids already acknowledged), once with and once without the 409 conflict list.
 * Kill points that need a request handled but unanswered use the sandbox's drop_after_commit fault: the agent is
 * killed while it waits to retry.
 * After the restarts, the outbox holds every approval exactly once and the platform shows every one acknowledged
 * once, none twice.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.ts';
import { currentVersions, sandboxApprovals } from '../pull/support.ts';
import { CLI_MAIN } from '../support/run-cli.ts';

const APPROVALS = 20_000;
const ACK_PATH = 'POST /v1/approved_prices/acknowledge';
const DELIVERIES_PATH = 'POST /v1/approved_prices/deliveries';

let sandbox: SandboxHandle;
let dir: string;
let config: string;
let dbPath: string;
let reader: Database.Database | null = null;

beforeAll(async () => {
  sandbox = await startSandbox({ approvals: APPROVALS, largeGridRows: 0 });
  dir = await mkdtemp(join(tmpdir(), 'pa-pull-crash-'));
  config = join(dir, 'pricing-agent.yaml');
  dbPath = join(dir, 'state', 'pricing-agent.db');
  await writeFile(config, `api:\n  base_url: ${sandbox.url}\n  key: \${PRICING_API_KEY}\nlog:\n  level: warn\n`);
});
afterAll(async () => {
  reader?.close();
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
});

interface Agent {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

function startAgent(): Agent {
  const child = spawn(process.execPath, [CLI_MAIN, 'pull', '--once', '--config', config], {
    env: { ...process.env, PRICING_API_KEY: sandbox.apiKey, PRICING_AGENT_CONFIG: undefined },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stderr })),
  );
  return { child, exited };
}

/** The agent's database, read-only, as a POS would open it (once the agent has created it). */
function db(): Database.Database | null {
  if (reader) return reader;
  if (!existsSync(dbPath)) return null;
  try {
    const opened = new Database(dbPath, { readonly: true, fileMustExist: true });
    opened.pragma('busy_timeout = 5000');
    opened.prepare('SELECT 1 FROM delivery_intents LIMIT 1').get(); // migrated yet?
    reader = opened;
  } catch {
    return null;
  }
  return reader;
}

function count(sql: string): number {
  const handle = db();
  return handle ? ((handle.prepare(sql).pluck().get() as number | undefined) ?? 0) : 0;
}

const pendingIntents = () => count(`SELECT count(*) FROM delivery_intents WHERE status = 'pending'`);
const doneIntents = () => count(`SELECT count(*) FROM delivery_intents WHERE status = 'done'`);
const stored = () => count('SELECT count(*) FROM approved_prices');
const acknowledged = () => count(`SELECT count(*) FROM approval_acks WHERE status = 'acknowledged'`);
const sandboxAcks = () => sandboxApprovals(sandbox).reduce((n, a) => n + a.ackCount, 0);

/** Kills the agent with SIGKILL as soon as `condition` holds; fails if it exits on its own first. */
async function killWhen(agent: Agent, what: string, condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  let exited = false;
  void agent.exited.then(() => (exited = true));
  while (!condition()) {
    if (exited) throw new Error(`the agent exited before ${what}: ${(await agent.exited).stderr}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 3));
  }
  agent.child.kill('SIGKILL');
  expect((await agent.exited).signal, what).toBe('SIGKILL');
}

describe('pricing-agent pull --once, SIGKILLed and restarted', () => {
  it('ends with every approval in the outbox once and acknowledged once', { timeout: 120_000 }, async () => {
    const expected = currentVersions(sandbox).map((a) => a.id).sort((a, b) => a - b);
    const control = sandbox.control;

    // 1a. A deliveries request in flight: its intent is committed, the platform has not answered yet. The
    // acknowledgements are refused (403) until step 2, so that nothing is acknowledged before it.
    control.setDenied([ACK_PATH]);
    control.setFaults({ latency_ms: 150, paths: [DELIVERIES_PATH] });
    const first = startAgent();
    // One request per stored page, plus refused acknowledgements: the pending page's request has arrived when the
    // deliveries requests pass the stored pages.
    const deliveriesArrived = () => control.world.counters.requests - control.world.counters.forbidden_requests;
    await killWhen(first, 'a page in flight after 3 stored', () => {
      const done = doneIntents();
      return done >= 3 && pendingIntents() === 1 && deliveriesArrived() === done + 1;
    });
    expect(pendingIntents()).toBe(1);

    // 1b. A page handed out (marked exported on the platform) whose answer was lost: killed while the agent waits
    // to retry it. The next run replays it by its request_id.
    control.setFaults(null);
    const resumed = startAgent();
    const pagesBefore = doneIntents();
    await killWhen(resumed, 'a lost page', () => {
      if (doneIntents() >= pagesBefore + 3 && control.world.faults.config === null) {
        control.setFaults({ drop_after_commit: 1, paths: [DELIVERIES_PATH] });
      }
      return control.world.faults.injected.drop_after_commit >= 1;
    });
    expect(pendingIntents()).toBe(1);
    const storedAfterFirst = stored();

    // 2. Pages stored, their acknowledgement not through: the platform drops the acknowledge connections.
    control.setDenied([]);
    control.setFaults({ drop_before_commit: 1, paths: [ACK_PATH] });
    const replaysBefore = control.world.counters.delivery_replays; // the killed agent may have retried once
    const second = startAgent();
    await killWhen(
      second,
      'a refused acknowledgement after the replayed page is stored',
      () => control.world.faults.injected.drop_before_commit >= 1 && stored() > storedAfterFirst,
    );
    expect(control.world.counters.delivery_replays).toBe(replaysBefore + 1);
    expect(stored()).toBeGreaterThan(storedAfterFirst);
    expect({ local: acknowledged(), platform: sandboxAcks() }).toEqual({ local: 0, platform: 0 });

    // 3. During the acknowledgements: a batch accepted by the platform whose answer is lost; killed while the agent
    //    waits to retry it, so the acceptance is never recorded. Once with, once without the 409 conflict list.
    for (const listed of [true, false]) {
      control.setAckConflictDetail(listed);
      control.setFaults(null);
      const before = acknowledged();
      const dropped = control.world.faults.injected.drop_after_commit;
      const agent = startAgent();
      await killWhen(agent, 'a lost acknowledgement after two batches', () => {
        if (acknowledged() >= before + 1000 && control.world.faults.config === null) {
          control.setFaults({ drop_after_commit: 1, paths: [ACK_PATH] });
        }
        return control.world.faults.injected.drop_after_commit > dropped;
      });
      expect(sandboxAcks()).toBe(acknowledged() + 500);
    }

    // 4. A run without faults finishes the job.
    control.setFaults(null);
    const last = await startAgent().exited;
    expect(last.code, last.stderr).toBe(0);

    const handle = db();
    if (!handle) throw new Error('no database');
    const fed = handle.prepare(`SELECT approval_id FROM price_feed WHERE kind = 'price' ORDER BY approval_id`).pluck().all();
    expect(fed).toEqual(expected);
    expect(count(`SELECT count(*) FROM price_feed WHERE kind = 'withdrawal'`)).toBe(0);
    expect(
      count(`SELECT count(*) FROM approved_prices a LEFT JOIN approval_acks k ON k.approval_id = a.id
        WHERE k.status IS NOT 'acknowledged'`),
    ).toBe(0);
    const acks = new Map(sandboxApprovals(sandbox).map((a) => [a.id, a]));
    for (const id of expected) expect(acks.get(id)?.ackCount, `ack count of ${id}`).toBe(1);
    for (const a of acks.values()) expect(a.ackCount, `ack count of ${a.id}`).toBeLessThanOrEqual(1);
    // The batches accepted after the kills were sent again and refused as already acknowledged, not counted twice.
    expect(control.state().approvals.acks.filter((a) => a.conflicting_acks > 0).length).toBeGreaterThanOrEqual(2 * 500);
  });
});
