/**
 * KeyMonitor against the sandbox over HTTP, with a ManualClock: after a 401, a new key written to the key file later
 * (or caught half-written at the 401) is picked up within seconds, not at the next key check; the rejected key is
 * never sent again, and an unchanged file costs the API nothing.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { KEY_FILE_REREAD_MS, KeyMonitor, keyCheckOf } from '../../src/daemon/key-monitor.ts';
import { alerts } from '../../src/console/overview-page.ts';
import type { StatusReport } from '../../src/status/status-report.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { sandboxWithAgentForFile } from '../support/sandbox-for-file.ts';
import { refusedUrl } from '../support/scripted-server.ts';
import { captureLogger, until } from '../support/test-logger.ts';

const INTERVAL_MS = 600_000; // ten minutes: anything picked up sooner is the key file's re-read

const api = sandboxWithAgentForFile();

it('after a 401, picks up a key written to the key file later within seconds, and sends the rejected key never again', async () => {
  const keyFile = join(await mkdtemp(join(tmpdir(), 'pa-key-')), 'api-key');
  await writeFile(keyFile, `${api.sandbox.apiKey}\n`);
  const readKey = async () => {
    // A read that takes a while, as on a loaded machine: the clock is advanced only while the monitor sleeps, or
    // its wake-up would pass unseen and it would sleep on, waiting for a clock that no longer moves.
    const key = (await readFile(keyFile, 'utf8')).trim();
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (key === '') throw new Error('the API key is empty');
    return key;
  };
  const clock = new ManualClock();
  const client = new ApiClient({ baseUrl: api.sandbox.url, apiKey: await readKey(), dispatcher: api.dispatcher, clock });
  const { logger, lines } = captureLogger();
  const monitor = new KeyMonitor({ client, readKey, clock, logger, intervalMs: INTERVAL_MS });
  try {
    expect(await monitor.verify()).toBe('ok');

    const newKey = api.sandbox.control.rotateKey();
    await writeFile(keyFile, ''); // caught half-written: `echo KEY > file` empties it first
    monitor.reportRejected();
    await until(() => lines().some((l) => String(l['msg']).includes('sending is paused')), 'the pause to be logged');
    const requestsWhilePaused = api.sandbox.control.state().requests.total;
    for (let i = 0; i < 5; i += 1) {
      await clock.untilWaiting();
      await clock.advance(KEY_FILE_REREAD_MS);
    }
    expect(monitor.state).toBe('rejected');
    expect(api.sandbox.control.state().requests.total, 'an empty or unchanged key file costs the API nothing').toBe(requestsWhilePaused);

    await clock.untilWaiting(); // asleep before the key is written: the read after the advance sees it
    await writeFile(keyFile, `${newKey}\n`);
    await clock.advance(KEY_FILE_REREAD_MS);
    await until(() => monitor.state === 'ok', 'the new key to be verified');
    expect(clock.sleeps.every((ms) => ms <= KEY_FILE_REREAD_MS), 'nothing waited for the ten-minute check').toBe(true);
    expect(api.sandbox.control.state().auth.rejected_total).toBe(0); // the rejected key was never sent by the monitor
  } finally {
    monitor.stop();
  }
});

it('when the API cannot be reached, logs what to check, as `check` says it', async () => {
  const url = await refusedUrl();
  const clock = new ManualClock();
  const client = new ApiClient({ baseUrl: url, apiKey: api.sandbox.apiKey, dispatcher: api.dispatcher, clock, maxAttempts: 1 });
  const { logger, lines } = captureLogger();
  const monitor = new KeyMonitor({ client, readKey: () => Promise.resolve(api.sandbox.apiKey), clock, logger, intervalMs: INTERVAL_MS });
  try {
    expect(await monitor.verify()).toBe('unreachable');
    const warning = lines().find((l) => l['level'] === 'warn');
    expect(warning?.['msg']).toBe(
      `could not verify the API key: Cannot reach the API at ${url}: the connection was refused; check api.base_url, the proxy settings (api.proxy, HTTPS_PROXY) and the firewall.`,
    );
  } finally {
    monitor.stop();
  }
});

it('a key that worked while the API stopped answering shows as unreachable, with since when and what to check; an answer ends it', async () => {
  const clock = new ManualClock();
  const client = new ApiClient({ baseUrl: api.sandbox.url, apiKey: api.sandbox.apiKey, dispatcher: api.dispatcher, clock, maxAttempts: 1 });
  await client.auth.verify();
  expect(client.transport.unreachable).toBeNull();
  api.sandbox.control.setFaults({ drop_before_commit: 1 }); // every request: the connection drops, no answer
  try {
    await expect(client.auth.verify()).rejects.toMatchObject({ code: 'API_TRANSPORT_ERROR' });
    await clock.advance(60_000);
    await expect(client.auth.verify()).rejects.toMatchObject({ code: 'API_TRANSPORT_ERROR' });
  } finally {
    api.sandbox.control.setFaults(null);
  }
  const down = client.transport.unreachable;
  expect(down?.since).toBe(Date.parse('2026-11-22T10:00:00Z')); // since the first request without an answer
  const shown = keyCheckOf('ok', api.sandbox.url, down);
  expect(shown).toMatchObject({ state: 'unreachable', base_url: api.sandbox.url });
  expect(shown.message).toMatch(/^no answer from the API since 2026-11-22 10:00 UTC: Cannot reach the API at /);
  const report = { api_key: shown, daemon: { state: 'ready', reasons: [] }, api_wait: null, database: { state: 'ok' }, held_files: [] };
  expect(alerts(report as unknown as StatusReport).toString()).toContain('The API does not answer: sending and pulling wait for it.');
  await client.auth.verify();
  expect(client.transport.unreachable).toBeNull();
  expect(keyCheckOf('ok', api.sandbox.url, client.transport.unreachable)).toEqual({ state: 'ok', base_url: api.sandbox.url });
});
