/**
 * The failover proof of issue 15 (`npm run test:chaos -- --ha`; a short run in `npm test`): two agents of an HA pair
 * (test/support/ha-pair.ts: one PostgreSQL state, the same inbox folders, each behind a logging proxy) against the
 * sandbox with faults, while files are dropped and approvals injected, amended and cancelled. The active node is
 * SIGKILLed at seeded moments (and restarted, as systemd does) and SIGSTOPped past its lease, then SIGCONTed. Then
 * faults off, both nodes restarted cleanly, and every check of the single-agent run (checks.ts: every valid row once,
 * no competitor price twice, every approval acknowledged once, every feed row once), plus: the old active of each
 * SIGSTOP sent nothing from its freeze until it stood by again (its proxy's log).
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Prng } from '../../src/sandbox/prng.ts';
import { daemonHarness } from '../support/daemon-harness.ts';
import { activeNode, endNodes, haPair, readyz, untilActive, type HaNode } from '../support/ha-pair.ts';
import { until } from '../support/test-logger.ts';
import { runChecks, type CheckRow } from './checks.ts';
import { readStateOutbox } from './evidence.ts';
import { sourcesYaml } from './files.ts';
import { applyWorldEvent, capture, newRunRecord, CHAOS_DEFAULTS, CHAOS_PULL_YAML, insertByTime, reported, settle, sleep, writeLogs, type ChaosOptions, type ChaosResult } from './runner.ts';
import { planTimeline, type ChaosEvent } from './timeline.ts';

export interface HaChaosOptions extends ChaosOptions {
  /** SIGSTOPs of the active node past its lease (each followed by SIGCONT). */
  readonly stops: number;
  readonly leaseS: number;
}

export const HA_CHAOS_DEFAULTS: HaChaosOptions = { ...CHAOS_DEFAULTS, kills: 12, stops: 4, leaseS: 3, txMode: 'bulk' };

/** One SIGSTOP: when the node froze, when it was woken, when it stood by again, and what its proxy saw meanwhile. */
interface StopRecord {
  readonly node: string;
  readonly stoppedAt: number;
  readonly continuedAt: number;
  readonly standbyAt: number | null;
  /** Requests that reached its proxy after the freeze (200 ms for requests already on the wire) until it stood by. */
  readonly sentAfter: number;
}

type HaEvent = ChaosEvent | { at: number; kind: 'stop' };

/** Every request the node sent was answered, the last one at least 50 ms ago (or it sent none yet). */
function nothingOnTheWire(n: HaNode): boolean {
  const last = n.proxy.log.at(-1);
  return last === undefined || (Date.now() - last.at >= 50 && n.proxy.log.every((r) => r.status !== undefined));
}

export async function runHaChaos(options: Partial<HaChaosOptions> = {}): Promise<ChaosResult> {
  const o: HaChaosOptions = { ...HA_CHAOS_DEFAULTS, ...options };
  const say = o.progress ?? (() => undefined);
  const rng = new Prng(o.seed, 'chaos');
  const h = await daemonHarness({ seed: o.seed, approvals: 40, largeGridRows: 0, dialect: o.dialect });
  const control = h.sandbox.control;
  const record = newRunRecord(h, o, () => readStateOutbox(join(h.dir, 'state')));
  const stops: StopRecord[] = [];
  const nodeOptions = {
    leaseS: o.leaseS,
    sources: sourcesYaml({ txMode: o.txMode }),
    api: '  timeout_ms: 10000\n  max_connections: 3\n',
    extra: CHAOS_PULL_YAML,
  };
  const nodes: HaNode[] = await haPair(h, nodeOptions);
  const start = (n: HaNode) => record.daemons.push(n.start());
  try {
    start(nodes[0] as HaNode);
    await activeNode(nodes);
    start(nodes[1] as HaNode);
    const each = o.faultRate / 5;
    control.setFaults({ error_500: each, error_502: each, error_503: each, drop_before_commit: each, drop_after_commit: each, latency_ms: o.latencyMs });
    // The single-agent timeline without its key rotation and 429 bursts (checks of one agent's manners), plus the stops.
    const timeline: HaEvent[] = planTimeline(rng, { durationMs: o.durationMs, kills: o.kills, files: o.files, rows: o.rows, stores: control.state({ keys: false }).stores })
      .filter((e) => e.kind !== 'rotate' && e.kind !== 'burst');
    for (let i = 0; i < o.stops; i += 1) insertByTime(timeline as ChaosEvent[], { at: (o.durationMs * (i + 0.5)) / o.stops, kind: 'stop' } as unknown as ChaosEvent);
    say(`chaos --ha: seed ${o.seed}, ${timeline.length} events over ${Math.round(o.durationMs / 1000)} s, lease ${o.leaseS} s, run folder ${h.dir}`);
    const began = Date.now();
    const queue = [...timeline];
    while (queue.length > 0) {
      const event = queue.shift() as HaEvent;
      await sleep(began + event.at - Date.now());
      if (event.kind === 'redrop' && !(await reported(h, event.file.source, event.file.name))) {
        if (event.at + 1_500 < o.durationMs) insertByTime(queue as ChaosEvent[], { ...event, at: event.at + 1_500 });
        else record.redropsSkipped += 1;
        continue;
      }
      if (event.kind === 'kill') await kill();
      else if (event.kind === 'stop') await stop();
      else if (event.kind !== 'rotate' && event.kind !== 'burst') await applyWorldEvent(h, record, rng, event);
    }

    say('chaos --ha: faults off, both nodes restarted cleanly');
    control.setFaults(null);
    for (const n of nodes) {
      n.signal('SIGTERM');
      await n.exited();
    }
    for (const n of nodes) start(n);
    const active = await activeNode(nodes);
    const final = active.processes.at(-1);
    const settleFrom = Date.now();
    try {
      if (final === undefined) throw new Error('no final process');
      await settle(h, record, final, o.settleTimeoutMs, active.configFile);
    } catch (error) {
      record.settleError = error instanceof Error ? error.message : String(error);
    }
    record.settledMs = Date.now() - settleFrom;
    if (active.running()) await capture(record, (path) => active.get(path), active.configFile);
    const codes: (number | null)[] = [];
    for (const n of [active, ...nodes.filter((x) => x !== active)]) {
      n.signal('SIGTERM');
      codes.push(((await n.exited()) as { code: number | null } | undefined)?.code ?? null);
    }
    record.finalStopCode = codes.find((c) => c !== 0) ?? 0;
  } finally {
    await endNodes(nodes);
    await h.close();
    await writeLogs(record);
  }
  const checks: CheckRow[] = await runChecks(record, h.sandbox);
  const silent = stops.filter((s) => s.sentAfter === 0 && s.standbyAt !== null).length;
  checks.push({
    check: 'the old active of each SIGSTOP sent nothing after its lease ended, and stood by',
    ok: stops.length >= o.stops && silent === stops.length,
    detail: `${stops.length} SIGSTOPs past the lease; silent and standing by ${silent}${stops
      .filter((s) => s.sentAfter > 0 || s.standbyAt === null)
      .map((s) => `; ${s.node}: ${s.sentAfter} requests after its freeze${s.standbyAt === null ? ', never stood by' : ''}`)
      .join('')}`,
  });
  checks.push({ check: 'HA run', ok: null, detail: `${record.kills} SIGKILLs of the active node, ${stops.length} SIGSTOPs past its lease (${o.leaseS} s)` });
  const ok = checks.every((c) => c.ok !== false);
  if (ok && !o.keep) await rm(h.dir, { recursive: true, force: true });
  return { ok, dir: h.dir, checks, record };

  /** SIGKILL of the active node (waiting for one while a takeover is under way), restarted as systemd would. */
  async function kill(): Promise<void> {
    const victim = await activeNode(nodes);
    victim.signal('SIGKILL');
    await victim.exited();
    record.kills += 1;
    start(victim);
  }

  /** SIGSTOP of the active node until the other one took over (its lease ended), then SIGCONT. */
  async function stop(): Promise<void> {
    const victim = await activeNode(nodes);
    const other = nodes.find((n) => n !== victim) as HaNode;
    if (!other.running()) return; // just killed and restarting: the next stop will do
    // Frozen between requests: a request the operating system already had when the process froze goes out, which
    // no process can take back; what must not go out is one begun after it woke (docs/ha.md).
    await until(() => nothingOnTheWire(victim), `${victim.name} with nothing on the wire`, 30_000).catch(() => undefined);
    victim.signal('SIGSTOP');
    const stoppedAt = Date.now();
    await untilActive(other, 60_000);
    const continuedAt = Date.now();
    victim.signal('SIGCONT');
    let standbyAt: number | null = null;
    await until(async () => (await readyz(victim)).role === 'standby', `${victim.name} standing by after SIGCONT`, 30_000).then(
      () => (standbyAt = Date.now()),
      () => undefined,
    );
    const sentAfter = victim.proxy.log.filter((r) => r.at > stoppedAt + 200 && r.at <= (standbyAt ?? Date.now())).length;
    stops.push({ node: victim.name, stoppedAt, continuedAt, standbyAt, sentAfter });
  }
}
