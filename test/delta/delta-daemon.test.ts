/**
 * The brakes in the daemon, as retail IT meets them: `pricing-agent run` (a child process) holds a wrong export in
 * held/ and counts it in /metrics; `pricing-agent files release` beside the running daemon moves it back, and the
 * daemon sends it without the brakes; the gauge goes back to 0.
 */
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';
import { daemonHarnessPerTest, until } from '../support/daemon-harness.ts';
import { runCli } from '../support/run-cli.ts';

vi.setConfig({ testTimeout: 90_000 });

const openHarness = daemonHarnessPerTest();

/** A port free now on 127.0.0.1: `files release` asks the daemon on the configured port (port 0 cannot be asked). */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

function metric(text: string, line: RegExp): number | null {
  const hit = text.split('\n').find((l) => line.test(l));
  return hit === undefined ? null : Number(hit.split(' ').at(-1));
}

it('holds a wrong export, counts it in /metrics, and sends it once released beside the running daemon', async () => {
  const h = await openHarness();
  await h.startReady(
    [
      `api:\n  base_url: ${h.sandbox.url}\n  key_file: ./api-key\n`,
      `state:\n  dir: ./state\n`,
      `http:\n  host: 127.0.0.1\n  port: ${await freePort()}\n`,
      `sources:\n  - name: stores\n    entity: product_store\n    path: ./inbox/stores\n    stable_ms: 200\n`,
    ].join(''),
  );
  const [store] = h.sandbox.control.state().stores;
  const csv = (prices: readonly string[]) => `item_id,store_id,current_price\n${prices.map((p, i) => `D-${i},${store},${p}`).join('\n')}\n`;
  await writeFile(join(h.inbox('stores'), 'day1.csv'), csv(['1.00', '2.00', '3.00']));
  expect(JSON.parse(await readFile(await h.report('stores', 'day1.csv'), 'utf8'))).toMatchObject({ status: 'done', rows: { sent: 3 } });

  // 2.00 becomes 200: held, nothing sent. Measured on the platform's rows (each write bumps its row's sequence
  // number), not by the request count, which the daemon's start-up pull and reconciliation may still be adding to.
  const storeRows = () => [...h.sandbox.control.world.productStore.table.rows()].map((r) => `${r.item_id} ${r.current_price} ${r.seq}`);
  const before = storeRows();
  await writeFile(join(h.inbox('stores'), 'day2.csv'), csv(['1.00', '200', '3.00']));
  const held = join(h.inbox('stores'), 'held', 'day2.csv');
  await until(() => existsSync(`${held}.preview.json`), 'the file to be held', 30_000);
  // The gauge follows once the ledger records the hold (right after the move).
  let metrics = await h.get('/metrics');
  for (let i = 0; i < 100 && metric(metrics.body, /^pricing_agent_files_total\{source="stores",outcome="held"\}/) === null; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    metrics = await h.get('/metrics');
  }
  expect(metric(metrics.body, /^pricing_agent_held_files\{source="stores"\}/), metrics.body.split('\n').filter((l) => l.includes('held')).join('\n')).toBe(1);
  expect(metric(metrics.body, /^pricing_agent_files_total\{source="stores",outcome="held"\}/)).toBe(1);
  expect(storeRows()).toEqual(before);

  const release = await runCli(['files', 'release', 'day2.csv', '--config', h.configFile]);
  expect(release.code, release.stderr).toBe(0);
  expect(release.stdout).toContain('the daemon sends it without the brakes');
  const report = JSON.parse(await readFile(await h.report('stores', 'day2.csv'), 'utf8')) as Record<string, unknown>;
  expect(report).toMatchObject({ status: 'done', rows: { read: 3, sent: 1, unchanged: 2 } });
  const price = [...h.sandbox.control.world.productStore.table.rows()].find((r) => r.item_id === 'D-1')?.current_price;
  expect(price).toBe('200');
  expect(metric((await h.get('/metrics')).body, /^pricing_agent_held_files\{source="stores"\}/) ?? 0).toBe(0);
});
