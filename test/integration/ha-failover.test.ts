/**
 * An active/standby pair (issue 15, docs/ha.md): two `pricing-agent run` processes with one PostgreSQL state and
 * one inbox folder, each reaching the sandbox through a proxy of its own that logs what that node sent.
 *
 * - One is active (/readyz?role=active 200), the other a ready standby (/readyz 200, role standby; ?role=active 503)
 *   that sends nothing at all.
 * - SIGKILL of the active in the middle of a file: the standby takes the lease over once it expired, resumes the file
 *   from its last checkpoint, and every row reaches the sandbox exactly once.
 * - SIGSTOP of the active in the middle of a file, past its lease: the standby takes over and finishes the file;
 *   after SIGCONT the old active sends nothing (its proxy's log) and steps down to standby.
 * - The network cable of either server pulled in the middle of a file (PostgreSQL and the platform silent, nothing
 *   closed): the other takes over and finishes the file; the cut-off node begins no request after its lease could
 *   have ended; plugged back, what it had written goes through (as TCP would deliver it), and it stands by.
 *
 * The postgres project only (HA needs the state in PostgreSQL).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { haPairPerTest, readyz, untilActive, type HaNode } from '../support/ha-pair.ts';
import { runCli } from '../support/run-cli.ts';
import { TEST_BACKEND } from '../support/state-db.ts';
import { until } from '../support/test-logger.ts';

const LEASE_S = 3;
const SOURCES = '  - name: tx\n    entity: transactions\n    path: ./inbox/tx\n    stable_ms: 200\n    batch_size: 200\n';

function transactions(prefix: string, count: number): string {
  const lines = ['transaction_id,item_id,transaction_timestamp,quantity,price'];
  for (let i = 0; i < count; i += 1) lines.push(`${prefix}-${i},ITEM-${i % 97},2026-11-20T08:00:00Z,1,${(i % 50) + 0.99}`);
  return `${lines.join('\n')}\n`;
}

/** Every request the node sent was answered, the last one at least `ms` ago. */
function quietSince(n: HaNode, ms: number): boolean {
  const last = n.proxy.log.at(-1);
  return last !== undefined && Date.now() - last.at >= ms && n.proxy.log.every((r) => r.status !== undefined);
}

const openPair = haPairPerTest();

describe.runIf(TEST_BACKEND === 'postgres')('an HA pair', () => {
  it('one active, one standby that sends nothing; SIGKILL and SIGSTOP of the active: taken over, every row once', async () => {
    const { harness, a, b } = await openPair({}, { leaseS: LEASE_S, sources: SOURCES });
    harness.sandbox.control.setFaults({ latency_ms: 40, paths: ['POST /v1/transactions/bulk'] });
    a.start();
    await untilActive(a);
    b.start();
    await until(async () => (await readyz(b)).status === 200, 'node-b ready', 60_000);
    expect(await readyz(b)).toMatchObject({ status: 200, role: 'standby' });
    expect((await readyz(b, '?role=active')).status).toBe(503);
    expect((await b.get('/metrics')).body).toMatch(/pricing_agent_ha_role\{role="standby"\} 1/);
    expect(b.proxy.log).toEqual([]); // a standby sends nothing, not even a key check

    // SIGKILL of the active in the middle of a file.
    const first = transactions('K', 6_000);
    await writeFile(join(harness.inbox('tx'), 'killed.csv'), first);
    await until(() => harness.transactionKeys('K').length >= 600, 'rows of killed.csv in the sandbox', 60_000);
    a.signal('SIGKILL');
    await a.exited();
    await untilActive(b);
    await harness.report('tx', 'killed.csv', 120_000);
    expect(harness.transactionKeys('K')).toHaveLength(6_000);
    expect(b.proxy.log.length).toBeGreaterThan(0);

    // The killed node comes back as a standby; then SIGSTOP of the active (b) in the middle of a file.
    a.start();
    await until(async () => (await readyz(a)).status === 200, 'node-a ready', 60_000);
    expect((await readyz(a)).role).toBe('standby');
    await writeFile(join(harness.inbox('tx'), 'stopped.csv'), transactions('S', 6_000));
    await until(() => harness.transactionKeys('S').length >= 600, 'rows of stopped.csv in the sandbox', 60_000);
    // Frozen while it waits to retry a 503: on waking, the retry is due at once, before any commit could fail.
    harness.sandbox.control.setFaults({ error_503: 1, paths: ['POST /v1/transactions/bulk'] });
    await until(() => b.proxy.log.some((r) => r.status === 503), 'a 503 answered to node-b', 60_000);
    // Frozen between requests (nothing of it on the wire): a request the operating system already had when the
    // process froze goes out, which no process can take back; what must not go out is a request begun after it woke.
    await until(() => quietSince(b, 50), 'node-b with nothing on the wire', 60_000);
    b.signal('SIGSTOP');
    const stoppedAt = Date.now();
    await untilActive(a); // after b's lease ended on the database's clock
    harness.sandbox.control.setFaults({ latency_ms: 40, paths: ['POST /v1/transactions/bulk'] });
    await harness.report('tx', 'stopped.csv', 120_000);
    const sentByBWhileStopped = b.proxy.log.filter((r) => r.at > stoppedAt + 200).length;
    const resumedAt = Date.now();
    b.signal('SIGCONT');
    await until(async () => (await readyz(b)).role === 'standby' && b.output().includes('steps down to standby'), 'node-b standby', 60_000);
    expect(sentByBWhileStopped).toBe(0);
    expect(b.proxy.log.filter((r) => r.at >= resumedAt)).toEqual([]); // the old active sent nothing after waking
    expect(harness.transactionKeys('S')).toHaveLength(6_000);
    expect((await readyz(a, '?role=active')).status).toBe(200);

    // status (any node's config) shows the pair: the lease's holder and each node's role (as each last said: the
    // stepped-down node says so once its work has stopped).
    type HaStatus = { ha: { this_node: string; lease: { holder: string; token: number }; nodes: { node: string; role: string }[] } };
    let report: HaStatus | null = null;
    await until(
      async () => {
        report = JSON.parse((await runCli(['status', '--config', b.configFile, '--json'])).stdout) as HaStatus;
        return report.ha.nodes.find((n) => n.node === 'node-b')?.role === 'standby';
      },
      'status showing node-b as a standby',
      30_000,
    );
    const ha = (report as HaStatus | null)?.ha;
    expect(ha).toMatchObject({ this_node: 'node-b', lease: { holder: 'node-a', token: 3 } });
    expect(ha?.nodes.map((n) => [n.node, n.role])).toEqual([
      ['node-a', 'active'],
      ['node-b', 'standby'],
    ]);
    expect((await runCli(['status', '--config', b.configFile])).stdout).toMatch(/HA\s+this node node-b; active: node-a \(lease token 3/);
  }, 240_000);

  it('the network cable of either server pulled in the middle of a file: the other takes over; plugged back, the cut-off node stands by', async () => {
    const { harness, a, b } = await openPair({}, { leaseS: LEASE_S, sources: SOURCES, network: true });
    harness.sandbox.control.setFaults({ latency_ms: 40, paths: ['POST /v1/transactions/bulk'] });
    a.start();
    await untilActive(a);
    b.start();
    await until(async () => (await readyz(b)).role === 'standby', 'node-b standing by', 60_000);

    let round = 0;
    for (const [active, standby] of [
      [a, b],
      [b, a],
    ] as const) {
      round += 1;
      const prefix = `NET${round}`;
      const name = `unplugged-${round}.csv`;
      await writeFile(join(harness.inbox('tx'), name), transactions(prefix, 6_000));
      await until(() => harness.transactionKeys(prefix).length >= 600, `rows of ${name} in the sandbox`, 60_000);
      const cables = active.network;
      if (cables === null) throw new Error('unreachable');
      cables.postgres.unplug();
      cables.api.unplug();
      const unpluggedAt = Date.now();
      // Cut off, it cannot hear that it lost the lease: it stands down when the lease ends by its own clock.
      await until(async () => (await readyz(active)).role === 'standby', `${active.name} standing down while cut off`, 60_000);
      expect((await readyz(active, '?role=active')).status).toBe(503);
      await untilActive(standby);
      await harness.report('tx', name, 120_000);
      expect(harness.transactionKeys(prefix)).toHaveLength(6_000);
      // Its last renewal was before the cable was pulled, so its lease ended at most lease_s later by any clock.
      const lateWrites = cables.api.written.filter((w) => w.at > unpluggedAt + LEASE_S * 1_000);
      expect(lateWrites, `${active.name} wrote to the platform after its lease could have ended`).toEqual([]);

      const reachable = () => active.output().split('the HA lease is reachable again').length - 1;
      const reachableBefore = reachable();
      const pluggedAt = Date.now();
      cables.postgres.plug();
      cables.api.plug();
      await until(() => reachable() > reachableBefore, `${active.name} reaching the database once plugged back`, 60_000);
      expect((await readyz(active)).role).toBe('standby');
      expect(cables.api.written.filter((w) => w.at >= pluggedAt), `${active.name} began a request once plugged back`).toEqual([]);
      expect((await readyz(standby, '?role=active')).status).toBe(200);
      expect(harness.transactionKeys(prefix)).toHaveLength(6_000);
    }
  }, 240_000);
});
