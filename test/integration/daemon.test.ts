/**
 * `pricing-agent run` as retail IT runs it: a child process with four sources against the sandbox. Files dropped
 * into the inboxes are pushed; /readyz and /metrics tell the truth; SIGTERM in the middle of a large file drains and
 * exits 0 within the bound, and after a restart the file finishes with every row exactly once; SIGHUP adds a source;
 * a rotated key pauses sending until a new key is written to the key file, with no restart. The first scenario goes
 * through every dialect of the sandbox.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { DIALECT_NAMES } from '../../src/sandbox/index.ts';
import { daemonHarnessPerTest, until, untilReady, type DaemonHarness } from '../support/daemon-harness.ts';
import { runCli } from '../support/run-cli.ts';
import { TEST_BACKEND } from '../support/state-db.ts';

// Child processes on two loaded cores: generous bounds on waiting (never on how fast the agent is).
vi.setConfig({ testTimeout: 90_000 });

const openHarness = daemonHarnessPerTest();

async function config(harness: DaemonHarness, sources: string[], extra = ''): Promise<string> {
  const block: Record<string, string> = {
    products: `  - name: products\n    entity: products\n    path: ./inbox/products\n    stable_ms: 200\n    delimiter: ";"\n    encoding: windows-1252\n    decimal_separator: ","\n    columns: { item_id: Artikelnummer, sku: Artikelnummer, product_name: Bezeichnung }\n`,
    stores: `  - name: stores\n    entity: product_store\n    path: ./inbox/stores\n    stable_ms: 200\n`,
    tx: `  - name: tx\n    entity: transactions\n    path: ./inbox/tx\n    stable_ms: 200\n    batch_size: 500\n`,
    competitors: `  - name: competitors\n    entity: competitor_prices\n    path: ./inbox/competitors\n    stable_ms: 200\n`,
  };
  return harness.configYaml(
    `log:\n  level: info\n`,
    `http:\n  port: 0\n`,
    `daemon:\n  key_check_interval_ms: 1000\n  shutdown_timeout_ms: 30000\n`,
    `sources:\n${sources.map((s) => block[s]).join('')}`,
    extra,
  );
}

function transactions(from: number, count: number): string {
  const lines = ['transaction_id,item_id,transaction_timestamp,quantity,price'];
  for (let i = from; i < from + count; i += 1) lines.push(`T${i},ITEM-${i % 997},2026-11-20T08:00:00Z,1,${(i % 50) + 0.99}`);
  return `${lines.join('\n')}\n`;
}

describe('pricing-agent run', () => {
  // Through every reading of the API document the sandbox plays (docs/sandbox.md).
  it.each(DIALECT_NAMES)('%s: pushes files of four sources, pulls approved prices into the outbox, reports ready, and counts it all in /metrics', async (dialect) => {
    const h = await openHarness({ approvals: 60, dialect });
    const daemon = await h.startReady(await config(h, ['products', 'stores', 'tx', 'competitors']));
    const [s1] = h.sandbox.control.state().stores;
    const win1252 = Buffer.from('Artikelnummer;Bezeichnung\nA-1;Bl\xfctenhonig\nA-2;K\xe4se\n', 'latin1');
    await writeFile(join(h.inbox('products'), 'erp.csv'), win1252);
    await writeFile(join(h.inbox('stores'), 'stores.csv'), `item_id,store_id,current_price\nA-1,${s1},4.99\n`);
    await writeFile(join(h.inbox('tx'), 'tx.csv'), transactions(0, 10));
    await writeFile(join(h.inbox('competitors'), 'cp.csv'), 'competitor_name,observed_at,regular_price,effective_price\nAldi,2026-11-20T08:00:00Z,1.99,1.79\n');
    for (const [source, name] of [['products', 'erp.csv'], ['stores', 'stores.csv'], ['tx', 'tx.csv'], ['competitors', 'cp.csv']] as const) {
      const report = JSON.parse(await readFile(await h.report(source, name), 'utf8')) as { status: string };
      expect(report.status).toBe('done');
    }
    const state = h.sandbox.control.state({ keys: true });
    expect(state.products.keys?.sort()).toEqual(['A-1', 'A-2']);
    expect(state.transactions.count).toBe(10);
    expect(state.competitor_prices.single_creates).toBe(0);
    // The approved-prices pull ran at start-up: every pending approval stored and acknowledged exactly once.
    await until(() => h.sandbox.control.state().approvals.pending === 0 && h.sandbox.control.state().approvals.exported_api === 0, 'every approval to be acknowledged', 30_000);
    const approvals = h.sandbox.control.state().approvals;
    expect(approvals.acknowledged).toBeGreaterThan(0);
    expect(approvals.acks.every((a) => a.ack_count === 1 && a.conflicting_acks === 0 && a.repeat_acks === 0)).toBe(true);
    const stored = await h.stateValue<number>("SELECT count(DISTINCT approval_id) FROM price_feed WHERE kind = 'price'");
    expect(stored).toBe(approvals.acknowledged);
    expect(JSON.parse((await h.get('/readyz')).body)).toEqual({ ready: true, state: 'running', reasons: [] });
    // The report is written just before the file's ledger row closes and the counters move: poll briefly.
    let metrics = '';
    const allCounted = () => ['products', 'stores', 'tx', 'competitors'].every((s) => metrics.includes(`pricing_agent_files_total{source="${s}",outcome="done"} 1`));
    for (let i = 0; i < 100 && !allCounted(); i += 1) {
      metrics = (await h.get('/metrics')).body;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(metrics).toContain('pricing_agent_files_total{source="tx",outcome="done"} 1');
    expect(metrics).toContain('pricing_agent_rows_total{entity="transactions",result="accepted"} 10');
    expect(metrics).toMatch(/pricing_agent_api_requests_total\{operation="products.bulk",status="200"\} 1/);
    expect(metrics).toContain('pricing_agent_ready 1');
    expect(metrics).toContain(`pricing_agent_approvals_acknowledged_total ${approvals.acknowledged}`);
    expect(metrics).toMatch(/pricing_agent_job_last_success_timestamp_seconds\{job="approved_prices"\} \d+/);
    // `status` reads the database while the daemon runs (WAL) and shows each source's day at a glance.
    const status = await runCli(['status', '--json', '--offline', '--config', h.configFile]);
    expect(status.code).toBe(0);
    const report = JSON.parse(status.stdout) as { sources: { name: string; done_today: number; processing: number }[] };
    expect(report.sources.map((s) => [s.name, s.done_today, s.processing]).sort()).toEqual([
      ['competitors', 1, 0],
      ['products', 1, 0],
      ['stores', 1, 0],
      ['tx', 1, 0],
    ]);
    expect(status.stdout + status.stderr).not.toContain(h.sandbox.apiKey);
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    expect(daemon.output()).not.toContain(h.sandbox.apiKey);
  });

  it('drains on SIGTERM in the middle of a large file, exits 0, and finishes it after a restart with every row once', async () => {
    const h = await openHarness();
    await h.writeConfig(await config(h, ['tx']));
    h.sandbox.control.setFaults({ latency_ms: 15, paths: ['POST /v1/transactions/bulk'] });
    const first = h.start();
    await untilReady(h);
    const rows = 40_000;
    await writeFile(join(h.inbox('tx'), 'big.csv'), transactions(0, rows));
    const committedBatches = async () => (await h.stateValue<number>('SELECT count(*) FROM push_batches')) ?? 0;
    await until(async () => (await committedBatches()) >= 5, 'some batches to be committed', 30_000);
    const stoppedAt = Date.now();
    first.child.kill('SIGTERM');
    expect(await first.exited).toEqual({ code: 0, signal: null });
    expect(Date.now() - stoppedAt).toBeLessThan(30_000);
    const afterStop = await committedBatches();
    expect(afterStop).toBeLessThan(rows / 500); // it really stopped in the middle
    expect(first.output()).toContain('"msg":"pricing-agent stopped"');

    h.sandbox.control.setFaults(null);
    const second = h.start();
    const report = JSON.parse(await readFile(await h.report('tx', 'big.csv', 60_000), 'utf8')) as { status: string; rows: Record<string, number> };
    expect(report.status).toBe('done');
    expect(report.rows).toMatchObject({ read: rows, accepted: rows, rejected: 0 });
    const keys = h.sandbox.control.state({ keys: true }).transactions.keys ?? [];
    expect(keys).toHaveLength(rows);
    expect(new Set(keys).size).toBe(rows);
    expect(await second.stop()).toBe(0);
  });

  it('adds a source on SIGHUP without a restart, and refuses an invalid config keeping the old one', async () => {
    const h = await openHarness();
    const daemon = await h.startReady(await config(h, ['tx']));
    await h.writeConfig((await config(h, ['tx'])).replace('sources:', 'sourcez:'));
    daemon.child.kill('SIGHUP');
    await until(() => daemon.output().includes('reload refused'), 'the invalid config to be refused');
    await h.writeConfig(await config(h, ['tx', 'competitors']));
    daemon.child.kill('SIGHUP');
    await until(() => daemon.output().includes('"msg":"config reloaded"'), 'the reload');
    expect(daemon.output()).toMatch(/"sources_added":\["competitors"\]/);
    // A setting a reload cannot apply (whether the console is served): the reload says to restart.
    const url = h.httpUrl();
    await h.writeConfig((await config(h, ['tx', 'competitors'])).replace('http:\n  port: 0\n', 'http:\n  port: 0\n  console: false\n'));
    daemon.child.kill('SIGHUP');
    await until(() => daemon.output().includes('http.console changed: restart the agent to apply them'), 'the restart warning');
    expect(h.httpUrl()).toBe(url);
    // A second daemon on the same SQLite state (its own free port) stops at once: one agent per state (the state's
    // lock). On PostgreSQL the HA lease decides between nodes on one schema (test/integration/ha-failover).
    if (TEST_BACKEND === 'sqlite') {
      const second = h.start();
      expect((await second.exited).code).toBe(1);
      expect(second.output()).toContain(`another pricing-agent runs on state.dir ${join(h.dir, 'state')}: stop it first`);
    }
    await writeFile(join(h.inbox('competitors'), 'cp.csv'), 'competitor_name,observed_at,regular_price,effective_price\nLidl,2026-11-20T08:00:00Z,2.09,2.09\n');
    await h.report('competitors', 'cp.csv');
    expect(h.sandbox.control.state().competitor_prices.count).toBe(1);
    expect(await daemon.stop()).toBe(0);
  });

  it('pauses on a rotated key, says so in /readyz, and resumes when a new key is written to the key file', async () => {
    const h = await openHarness();
    const daemon = await h.startReady(await config(h, ['tx']));
    h.sandbox.control.rotateKey(); // the platform user generated a new key: ours now gets 401
    await writeFile(join(h.inbox('tx'), 'after-rotation.csv'), transactions(100, 5));
    const notReady = JSON.parse(await untilReady(h, 503)) as { reasons: string[] };
    expect(notReady.reasons.join(' ')).toMatch(/rejected the key \(401\)/);
    expect(h.sandbox.control.state().transactions.count).toBe(0);
    // At the 401 the agent reads the key file once more before it pauses: the new key is written after that.
    await until(() => daemon.output().includes('sending is paused'), 'the agent to pause');
    const rejectedRequests = h.sandbox.control.state().auth.rejected_total;
    await writeFile(h.keyFile, `${h.sandbox.apiKey}\n`, { mode: 0o600 }); // the new key, as IT would write it
    await h.report('tx', 'after-rotation.csv');
    await untilReady(h, 200);
    expect(h.sandbox.control.state().transactions.count).toBe(5);
    // One 401 stops sending; the re-checks (every second here) do not send the rejected key again.
    expect(rejectedRequests).toBeGreaterThanOrEqual(1);
    expect(rejectedRequests).toBeLessThanOrEqual(3);
    expect(h.sandbox.control.state().auth.rejected_total).toBe(rejectedRequests);
    expect(daemon.output().match(/rejected the key \(401\): sending is paused/g)).toHaveLength(1);
    expect(await daemon.stop()).toBe(0);
  });
});
