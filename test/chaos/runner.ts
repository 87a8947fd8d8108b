/**
 * The chaos scenario (issue 7): `pricing-agent run` as a child process with four sources and the approved-prices
 * pull, against the sandbox in this process with faults (5xx, connections dropped before and after the commit,
 * latency, 429 bursts), while files of all four entities are dropped, approvals are injected, amended and
 * cancelled, the key is rotated once, and the daemon is SIGKILLed at seeded random moments and restarted. Then
 * faults off, one clean restart, wait until everything settled, and check (checks.ts). Used by `npm run
 * test:chaos` (cli.ts) and by a small fixed-seed run in `npm test` (chaos.test.ts).
 */
import { rm, unlink, writeFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { ControlError } from '../../src/sandbox/index.ts';
import { daemonHarness, type DaemonHarness, type DaemonProcess } from '../support/daemon-harness.ts';
import { runCli } from '../support/run-cli.ts';
import { outboxOf, runChecks, type CheckRow, type RunRecord } from './checks.ts';
import { reportsIn, unfinishedIn } from './evidence.ts';
import { CHAOS_ENTITIES, SOURCE_OF, sourcesYaml } from './files.ts';
import { Prng } from '../../src/sandbox/prng.ts';
import { planTimeline, type ChaosEvent } from './timeline.ts';
import { CHAOS_DEFAULTS, type ChaosOptions } from './options.ts';

export { CHAOS_DEFAULTS, type ChaosOptions } from './options.ts';

export interface ChaosResult {
  readonly ok: boolean;
  readonly dir: string;
  readonly checks: CheckRow[];
  readonly record: RunRecord;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** The pull of every chaos scenario: a page every 2 s, a reconciliation every 4 s. */
export const CHAOS_PULL_YAML =
  `pull:\n  approved_prices:\n    schedule: "*/2 * * * * *"\n    page_size: 25\n` +
  `    reconcile:\n      schedule: "*/4 * * * * *"\n      lookback_days: 0\n`;

function configYaml(h: DaemonHarness, o: ChaosOptions): string {
  return [
    // Three connections: every request on the wire when the platform rotates the key gets a 401 before the agent
    // can know, so the agent's guarantee is "at most api.max_connections rejected requests per rotation". The check
    // below holds the bound of 3; with the default 4 connections it would hold only by luck.
    `api:\n  base_url: ${h.sandbox.url}\n  key_file: ./api-key\n  timeout_ms: 10000\n  max_connections: 3\n`,
    `state:\n  dir: ./state\n`,
    `log:\n  level: info\n`,
    `http:\n  port: 0\n`,
    `daemon:\n  key_check_interval_ms: 1000\n  shutdown_timeout_ms: 20000\n`,
    CHAOS_PULL_YAML,
    `sources:\n${sourcesYaml({ txMode: o.txMode })}`,
  ].join('');
}

/** The record of a run that starts now, on the harness `h`. */
export function newRunRecord(h: DaemonHarness, o: ChaosOptions, outbox?: RunRecord['outbox']): RunRecord {
  return {
    options: o,
    dir: h.dir,
    keyFile: h.keyFile,
    keys: [h.sandbox.apiKey],
    drops: [],
    redropsSkipped: 0,
    kills: 0,
    daemons: [],
    approvalsInjected: 0,
    amended: 0,
    cancelled: 0,
    finalStopCode: null,
    captures: {},
    startedAt: Date.now(),
    settledMs: 0,
    settleError: null,
    setAside: new Map(),
    trips: [],
    ...(outbox ? { outbox } : {}),
  };
}

export async function runChaos(options: Partial<ChaosOptions> = {}): Promise<ChaosResult> {
  const o: ChaosOptions = { ...CHAOS_DEFAULTS, ...options };
  const say = o.progress ?? (() => undefined);
  // The sandbox's seeded generator, on a stream of its own: same seed, same timeline of drops, kills, approvals and
  // bursts (the moments a kill lands still vary with the machine's timing).
  const rng = new Prng(o.seed, 'chaos');
  const h = await daemonHarness({ seed: o.seed, approvals: 40, largeGridRows: 0, dialect: o.dialect });
  const control = h.sandbox.control;
  const record = newRunRecord(h, o);
  const start = () => {
    const daemon = h.start();
    record.daemons.push(daemon);
    return daemon;
  };
  try {
    recordTrips(h, record);
    await h.writeConfig(configYaml(h, o));
    start();
    const each = o.faultRate / 5;
    control.setFaults({ error_500: each, error_502: each, error_503: each, drop_before_commit: each, drop_after_commit: each, latency_ms: o.latencyMs });
    const timeline = planTimeline(rng, { durationMs: o.durationMs, kills: o.kills, files: o.files, rows: o.rows, stores: control.state({ keys: false }).stores });
    say(`chaos: seed ${o.seed}, dialect ${o.dialect}, ${timeline.length} events over ${Math.round(o.durationMs / 1000)} s, run folder ${h.dir}`);
    const began = Date.now();
    const queue = [...timeline];
    while (queue.length > 0) {
      const event = queue.shift() as ChaosEvent;
      await sleep(began + event.at - Date.now());
      if (event.kind === 'redrop' && !(await reported(h, event.file.source, event.file.name))) {
        // Re-dropped only once the first copy has left the inbox; otherwise the copy would just overwrite it.
        if (event.at + 1_500 < o.durationMs) insertByTime(queue, { ...event, at: event.at + 1_500 });
        else record.redropsSkipped += 1;
        continue;
      }
      await apply(event);
    }

    say('chaos: faults off, final restart');
    control.setFaults(null);
    control.setRateLimit(null);
    const last = record.daemons.at(-1);
    if (last) {
      last.child.kill('SIGTERM');
      await last.exited;
    }
    const final = start();
    const settleFrom = Date.now();
    try {
      await settle(h, record, final, o.settleTimeoutMs);
    } catch (error) {
      record.settleError = error instanceof Error ? error.message : String(error);
    }
    record.settledMs = Date.now() - settleFrom;
    if (final.child.exitCode === null) await capture(record, (path) => h.get(path), h.configFile);
    final.child.kill('SIGTERM');
    record.finalStopCode = (await final.exited).code;
  } finally {
    await h.close();
    await writeLogs(record);
  }
  const checks = await runChecks(record, h.sandbox);
  const ok = checks.every((c) => c.ok !== false);
  if (ok && !o.keep) await rm(h.dir, { recursive: true, force: true });
  return { ok, dir: h.dir, checks, record };

  async function apply(event: ChaosEvent): Promise<void> {
    switch (event.kind) {
      case 'kill': {
        const victim = record.daemons.at(-1);
        if (victim) {
          victim.child.kill('SIGKILL');
          await victim.exited;
        }
        record.kills += 1;
        start();
        return;
      }
      case 'burst':
        control.setRateLimit(event.on ? { requests: 4, window_seconds: 2 } : null);
        return;
      case 'rotate': {
        // The platform user generates a new key; IT writes it to the key file once the agent says it was rejected.
        const before = control.state({ keys: false }).auth.rejected_total;
        const key = control.rotateKey();
        record.keys.push(key);
        const deadline = Date.now() + 3_000;
        while (Date.now() < deadline && control.state({ keys: false }).auth.rejected_total === before) await sleep(50);
        await writeFile(h.keyFile, `${key}\n`, { mode: 0o600 });
        return;
      }
      default:
        await applyWorldEvent(h, record, rng, event);
    }
  }
}

/** The events of the world around the agent (files dropped, approvals changing on the platform), for every scenario. */
export async function applyWorldEvent(
  h: DaemonHarness,
  record: RunRecord,
  rng: Prng,
  event: Extract<ChaosEvent, { kind: 'drop' | 'redrop' | 'approvals' | 'amend' | 'cancel' }>,
): Promise<void> {
  const control = h.sandbox.control;
  switch (event.kind) {
    case 'drop':
    case 'redrop': {
      const inbox = h.inbox(event.file.source);
      const target = join(inbox, event.file.name);
      const method = event.kind === 'drop' ? event.method : 'direct';
      if (event.kind === 'redrop') await unlink(`${target}.done`).catch(() => undefined);
      if (method === 'rename') {
        await writeFile(`${target}.part`, event.file.bytes);
        await rename(`${target}.part`, target);
      } else await writeFile(target, event.file.bytes);
      if (method === 'marker') await writeFile(`${target}.done`, '');
      record.drops.push({ file: event.file, redrop: event.kind === 'redrop' });
      return;
    }
    case 'approvals':
      record.approvalsInjected += control.injectApprovals({ count: event.count }).length;
      return;
    case 'amend':
    case 'cancel': {
      const current = control.world.approvals.all().filter((a) => a.cancelled_at === null && a.supersededBy === null);
      if (current.length === 0) return;
      const target = rng.pick(current);
      try {
        if (event.kind === 'amend') {
          control.amend(target.id, { approved_price: `${rng.int(1, 99)}.${rng.int(10, 99)}`, reason: 'chaos' });
          record.amended += 1;
        } else {
          control.cancel(target.id);
          record.cancelled += 1;
        }
      } catch (error) {
        if (!(error instanceof ControlError)) throw error;
      }
      return;
    }
  }
}

/**
 * Instrumentation of the sandbox's rate limiter: the moment of every 429 that closed a window (not the 429s of
 * early requests), so that each early request can be placed relative to the 429 that closed its window.
 */
function recordTrips(h: DaemonHarness, record: RunRecord): void {
  const limiter = h.sandbox.control.world.rateLimiter;
  const check = limiter.check.bind(limiter);
  limiter.check = (keyId, now, method, path) => {
    const early = limiter.early.length;
    const limited = check(keyId, now, method, path);
    if (limited !== null && limiter.early.length === early) record.trips.push(now);
    return limited;
  };
}

export function insertByTime(queue: ChaosEvent[], event: ChaosEvent): void {
  const at = queue.findIndex((e) => e.at > event.at);
  if (at < 0) queue.push(event);
  else queue.splice(at, 0, event);
}

export async function reported(h: DaemonHarness, source: string, name: string): Promise<boolean> {
  return (await reportsIn(h.inbox(source))).some((r) => r.file === name);
}

/**
 * Files the agent set aside as CRASHED_AGENT (the chaos kills it twice while one is in progress, as a poison file
 * would): retried with the command their report names, once each, as an operator would. Returns how many.
 */
async function retrySetAside(record: RunRecord, configFile: string): Promise<number> {
  const list = await runCli(['files', 'list', '--status', 'failed', '--json', '--limit', '1000', '--config', configFile]);
  // A list that fails would otherwise look like nothing to retry, and the run would end on a settle timeout.
  if (list.code !== 0) throw new Error(`files list --status failed exited ${list.code}: ${list.stderr}`);
  const failed = JSON.parse(list.stdout) as { id: number; source: string; name: string; error_code: string | null }[];
  let retried = 0;
  for (const f of failed) {
    if (f.error_code !== 'CRASHED_AGENT' || record.setAside.has(f.id)) continue;
    record.setAside.set(f.id, `${f.source}/${f.name}`);
    const run = await runCli(['files', 'retry', String(f.id), '--config', configFile]);
    if (run.code !== 0) throw new Error(`files retry ${f.id} (${f.name}, set aside as CRASHED_AGENT) exited ${run.code}: ${run.stderr}`);
    retried += 1;
  }
  return retried;
}

/**
 * Waits until the final daemon has nothing left: every drop has its report, no data file is left in an inbox or
 * processing/, nothing deliverable is waiting on the platform, nothing waits for an acknowledgement locally, and a
 * history reconciliation ran after the last change.
 */
export async function settle(h: DaemonHarness, record: RunRecord, final: DaemonProcess, timeoutMs: number, configFile = h.configFile): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let why = '';
    if ((await retrySetAside(record, configFile)) > 0) why = 'files set aside as CRASHED_AGENT retried';
    for (const entity of CHAOS_ENTITIES) {
      const source = SOURCE_OF[entity];
      const reports = await reportsIn(h.inbox(source));
      const drops = record.drops.filter((d) => d.file.source === source);
      const missing = drops.filter((d) => reports.filter((r) => r.file === d.file.name).length < drops.filter((x) => x.file.name === d.file.name).length);
      if (missing.length > 0) why ||= `${missing.length} ${source} file(s) without a report`;
      const left = await unfinishedIn(h.inbox(source));
      if (left.length > 0) why ||= `${left.length} ${source} file(s) not finished`;
    }
    const deliverable = h.sandbox.control.world.approvals
      .all()
      .filter((a) => a.export_status !== 'acknowledged' && a.cancelled_at === null && a.supersededBy === null);
    if (deliverable.length > 0) why ||= `${deliverable.length} approvals not acknowledged on the platform`;
    const outbox = await outboxOf(record);
    if (!outbox) why ||= 'no outbox yet';
    else if (outbox.pendingAcks > 0) why ||= `${outbox.pendingAcks} acknowledgements pending locally`;
    if (!final.output().includes('approved prices reconciled with the history')) why ||= 'no reconciliation since the final start';
    if (why === '') return;
    if (final.child.exitCode !== null) throw new Error(`the final daemon exited (${final.child.exitCode}) before settling: ${why}`);
    if (Date.now() > deadline) throw new Error(`the agent did not settle within ${timeoutMs} ms: ${why}`);
    await sleep(250);
  }
}

/**
 * What the agent shows people at the end: /metrics, /readyz, and the CLI's status and outbox output (of the daemon
 * `get` reaches, with `configFile`: the single daemon, or the active node of an HA pair).
 */
export async function capture(
  record: RunRecord,
  get: (path: string) => Promise<{ body: string }>,
  configFile: string,
): Promise<void> {
  record.captures['metrics'] = (await get('/metrics')).body;
  record.captures['readyz'] = (await get('/readyz')).body;
  record.captures['healthz'] = (await get('/healthz')).body;
  for (const args of [['status'], ['outbox', 'stats'], ['files']]) {
    const run = await runCli([...args, '--config', configFile]);
    record.captures[`cli-${args.join('-')}`] = `exit ${run.code}\n${run.stdout}${run.stderr}`;
  }
  await Promise.all(Object.entries(record.captures).map(([name, text]) => writeFile(join(record.dir, `capture-${name}.txt`), text)));
}

export async function writeLogs(record: RunRecord): Promise<void> {
  await Promise.all(record.daemons.map((d, i) => writeFile(join(record.dir, `daemon-${String(i).padStart(2, '0')}.log`), d.output())));
}
