/**
 * Regression (issue 11, failure 9): requests reached the server up to 33 ms after a 429 (they had passed the rate
 * gate already, on other connections, and waited for a connection or their body), and one-shot commands (`status`,
 * `check`, `pull`) ignored the Retry-After window the daemon had recorded. Now the gate is asked again at the moment
 * a request is written (gate-interceptor.ts), and the window lives in the state database (api_pacing), where every
 * process of the agent reads it before it sends. Dialect: default (its rate limit records early requests).
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterEach, expect, it } from 'vitest';
import { connectApi, pacingOf } from '../../src/api-from-config.ts';
import { ApiClient } from '../../src/api/client.ts';
import { loadConfig } from '../../src/config/index.ts';
import { createLogger } from '../../src/log.ts';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.ts';
import { rateLimitedUntil } from '../../src/store/api-state.ts';
import { openStateDb } from '../../src/store/open-state-db.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { runCli } from '../support/run-cli.ts';
import { until } from '../support/test-logger.ts';

let sandbox: SandboxHandle;
afterEach(() => sandbox.close());

it('a request that passed the gate but was not written yet waits when a 429 closes the gate meanwhile', async () => {
  const clock = new ManualClock();
  sandbox = await startSandbox({ approvals: 0, largeGridRows: 0, clock });
  sandbox.control.setRateLimit({ requests: 1, window_seconds: 30 });
  // No slot bound: the second and third requests pass the open gate and wait in undici for the one connection.
  const dispatcher = new Agent({ allowH2: false, connections: 1 });
  const client = new ApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey, dispatcher, clock });
  try {
    let settled = false;
    const all = Promise.all([client.auth.verify(), client.auth.verify(), client.auth.verify()]).finally(() => (settled = true));
    const busy = () => Object.values(dispatcher.stats).some((s) => s.pending > 0 || s.running > 0);
    await until(() => clock.waiting > 0 && !busy(), 'the requests to settle at the gate');
    const state = sandbox.control.state({ keys: false }).rate_limit;
    expect(state.limited).toBe(1);
    expect(state.early_requests).toEqual([]); // nothing written inside the window
    // One request per 30 s window: the other two go in the next windows.
    while (!settled) {
      await clock.advance(30_000);
      await until(() => settled || (clock.waiting > 0 && !busy()), 'the next window');
    }
    await expect(all).resolves.toHaveLength(3);
    expect(sandbox.control.state({ keys: false }).rate_limit).toMatchObject({ limited: 2, early_requests: [] });
  } finally {
    await dispatcher.close();
  }
});

it('a window one process was given holds for every other process of the agent, one-shot commands included', { timeout: 60_000 }, async () => {
  sandbox = await startSandbox({ approvals: 0, largeGridRows: 0 });
  const dir = await mkdtemp(join(tmpdir(), 'pa-window-'));
  const configFile = join(dir, 'pricing-agent.yaml');
  await writeFile(configFile, `api:\n  base_url: ${sandbox.url}\n  key: ${sandbox.apiKey}\nstate:\n  dir: ${dir}/state\n`);
  const logger = createLogger({ level: 'warn', destination: { write: () => undefined } });
  const config = await loadConfig(configFile, {}, { logger });
  const daemonDb = await openStateDb(config.state);
  // The daemon's client is given a 429 with Retry-After 10 s (the sandbox's rate limit: one request per window): long
  // enough that the `check` below, a new Node.js process, still starts inside it on a loaded machine.
  sandbox.control.setRateLimit({ requests: 1, window_seconds: 10 });
  const daemon = connectApi(config.api, logger, { pacing: pacingOf(daemonDb, logger) });
  const stop = new AbortController();
  try {
    await daemon.client.auth.verify();
    const limited = daemon.client.auth.verify({ signal: stop.signal }); // the 429: the window is recorded
    await until(async () => (await rateLimitedUntil(daemonDb)) > 0, 'the window to be recorded');
    stop.abort(); // the daemon stops (its request never goes again)
    await limited.catch(() => undefined);
    // Another process (`pricing-agent check`) started inside the window waits for it: no early request.
    const run = await runCli(['check', '--config', configFile]);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/waiting \d+ s: the API asked the agent to wait \(Retry-After\)/);
    expect(sandbox.control.state({ keys: false }).rate_limit).toMatchObject({ limited: 1, early_requests: [] });
  } finally {
    await daemon.close();
    await daemonDb.close();
  }
});
