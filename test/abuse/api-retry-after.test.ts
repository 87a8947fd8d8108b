/**
 * Attack (issue 27, point 2): the API server, or a proxy in front of it, answers with a Retry-After that would stop
 * the agent for weeks. One 429 with `Retry-After: 3000000` (35 days) stopped every push and pull, survived restarts
 * (the window is stored), made `status` and `check` wait too, and past Node's 24.8-day timer limit made the agent
 * spin writing warnings. Now any Retry-After (delta-seconds or HTTP-date, on a 429 or a 503) is honoured within
 * api.max_retry_after (15 min by default), no timer is armed beyond Node's limit, a stored window is bounded when
 * read back, `status`, `check`, /readyz and the console say the window instead of waiting on it, and
 * `pricing-agent api clear-wait` ends it, for a running daemon too.
 *
 * Time: a ManualClock in the process (no test sleeps for a timer); the child processes run on the real clock, and
 * only ever against windows they must not wait for.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { Agent, request } from 'undici';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { pacingOf } from '../../src/api-from-config.ts';
import { ApiClient } from '../../src/api/client.ts';
import { createLogger } from '../../src/log.ts';
import { recordRateLimitedUntil } from '../../src/store/api-state.ts';
import { daemonHarness, type DaemonHarness } from '../support/daemon-harness.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { runCli } from '../support/run-cli.ts';
import { startScriptedServer, VERIFY_BODY, type ScriptedServer, type Step } from '../support/scripted-server.ts';
import { openTestDb, testStateYaml } from '../support/state-db.ts';
import { until } from '../support/test-logger.ts';

const KEY = 'svc_live_RetryAfterAbuse000011112222333344';
const ok: Step = { reply: 200, body: VERIFY_BODY };
const FIFTEEN_MIN = 15 * 60 * 1000;
/** Node's timer limit: a longer setTimeout fires at once (with a warning), which made the agent spin. */
const NODE_TIMER_MAX = 2 ** 31 - 1;

const dispatcher = new Agent({ allowH2: false });
let server: ScriptedServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});
afterAll(() => dispatcher.close());

function client(url: string, clock: ManualClock, more: Partial<ConstructorParameters<typeof ApiClient>[0]> = {}): ApiClient {
  return new ApiClient({ baseUrl: url, apiKey: KEY, dispatcher, clock, random: () => 0, ...more });
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/**
 * Advances the clock a minute at a time while `promise` is pending, at most `limitMs` in all; returns whether it
 * settled. A wait past the limit shows as `false` at once, not as a test that runs for 35 simulated days.
 */
async function settlesWithin<T>(clock: ManualClock, promise: Promise<T>, limitMs: number): Promise<boolean> {
  let settled = false;
  promise.then(() => (settled = true), () => (settled = true));
  const end = clock.now() + limitMs;
  while (!settled && clock.now() < end) {
    await new Promise((r) => setImmediate(r));
    if (clock.waiting > 0) await clock.advance(Math.min(60_000, end - clock.now()));
  }
  for (let i = 0; i < 20 && !settled; i += 1) await new Promise((r) => setImmediate(r));
  return settled;
}

describe('a Retry-After from the server is honoured within api.max_retry_after', () => {
  it.each([
    ['a 429 with Retry-After: 3000000 (35 days)', 429, '3000000'],
    ['a 429 with an HTTP-date decades away', 429, 'Fri, 01 Jan 2100 00:00:00 GMT'],
    ['a 503 (a proxy) with Retry-After: 3000000', 503, '3000000'],
  ])('%s waits at most 15 min, and no timer is armed beyond Node\'s limit', async (_what, status, retryAfter) => {
    server = await startScriptedServer([{ reply: status, headers: { 'retry-after': retryAfter } }, ok]);
    const clock = new ManualClock();
    const verified = client(server.url, clock).auth.verify();
    expect(await settlesWithin(clock, verified, FIFTEEN_MIN + 60_000)).toBe(true);
    await expect(verified).resolves.toMatchObject({ ok: true });
    expect(server.received).toHaveLength(2);
    expect(Math.max(...clock.sleeps)).toBeLessThanOrEqual(NODE_TIMER_MAX);
  });

  it('a smaller api.max_retry_after is the bound', async () => {
    server = await startScriptedServer([{ reply: 429, headers: { 'retry-after': '3600' } }, ok]);
    const clock = new ManualClock();
    const started = clock.now();
    const verified = client(server.url, clock, { maxRetryAfterMs: 120_000 }).auth.verify();
    expect(await settlesWithin(clock, verified, 180_000)).toBe(true);
    expect(clock.now() - started).toBeGreaterThanOrEqual(120_000); // the bound is still honoured in full
  });

  it('a 503 with Retry-After (a proxy in front of the API) is honoured too, within the cap', async () => {
    server = await startScriptedServer([{ reply: 503, headers: { 'retry-after': '120' } }, ok]);
    const clock = new ManualClock();
    const started = clock.now();
    const verified = client(server.url, clock).auth.verify();
    expect(await settlesWithin(clock, verified, FIFTEEN_MIN)).toBe(true);
    await expect(verified).resolves.toMatchObject({ ok: true });
    // The document's backoff alone would have retried after 1 s.
    expect(clock.now() - started).toBeGreaterThanOrEqual(120_000);
  });

  it('a 503 with Retry-After: 0 is never retried sooner than the document\'s backoff', async () => {
    server = await startScriptedServer([{ reply: 503, headers: { 'retry-after': '0' } }, ok]);
    const clock = new ManualClock();
    const started = clock.now();
    const verified = client(server.url, clock).auth.verify();
    expect(await settlesWithin(clock, verified, 60_000)).toBe(true);
    expect(clock.now() - started).toBeGreaterThanOrEqual(1_000);
  });

  it('a 429 that says "now" (0, a date already past, a server clock behind, "1.5", "-1") is not resent at once', async () => {
    const clock = new ManualClock();
    const serverNow = clock.now() - 60_000; // the server's clock a minute behind the agent's
    const at = (ms: number) => ({ date: new Date(serverNow).toUTCString(), 'retry-after': new Date(ms).toUTCString() });
    const answers = [{ 'retry-after': '0' }, at(serverNow - 4_000), at(serverNow + 30_000), { 'retry-after': '1.5' }, { 'retry-after': '-1' }];
    server = await startScriptedServer([...answers.map((headers) => ({ reply: 429, headers })), ok]);
    const verified = client(server.url, clock).auth.verify();
    expect(await settlesWithin(clock, verified, FIFTEEN_MIN)).toBe(true);
    await expect(verified).resolves.toMatchObject({ ok: true });
    expect(server.received).toHaveLength(6);
    // What the agent waited for (settlesWithin moves the clock by a minute at a time): 1 s after each "now", and
    // the 30 s the server asked for by its own clock (by the agent's, a date 30 s ago).
    expect(clock.sleeps.reduce((sum, ms) => sum + ms, 0)).toBeGreaterThanOrEqual(4 * 1_000 + 30_000);
  });

  it('a 35-day window stored before (an older version, a larger cap) is bounded when read back at start', async () => {
    server = await startScriptedServer([ok]);
    const dir = await mkdtemp(join(tmpdir(), 'pa-abuse-stored-'));
    const clock = new ManualClock(Date.now());
    const db = await openTestDb(join(dir, 'state'), { now: () => clock.now() });
    try {
      await recordRateLimitedUntil(db, clock.now() + 35 * 24 * 3_600_000);
      const logger = createLogger({ level: 'fatal', destination: { write: () => undefined } });
      const verified = client(server.url, clock, { pacing: pacingOf(db, logger) }).auth.verify();
      expect(await settlesWithin(clock, verified, FIFTEEN_MIN + 60_000)).toBe(true);
      await expect(verified).resolves.toMatchObject({ ok: true });
      expect(Math.max(...clock.sleeps)).toBeLessThanOrEqual(NODE_TIMER_MAX);
    } finally {
      await db.close();
    }
  });
});

describe('status, check and clear-wait say the window instead of waiting on it', () => {
  it('check exits at once with until when and why, status shows it, clear-wait ends it', { timeout: 60_000 }, async () => {
    server = await startScriptedServer([{ reply: 429, headers: { 'retry-after': '3000000' } }, ok, ok]);
    const dir = await mkdtemp(join(tmpdir(), 'pa-abuse-wait-'));
    const configFile = join(dir, 'pricing-agent.yaml');
    await writeFile(configFile, `api:\n  base_url: ${server.url}\n  key: ${KEY}\n${await testStateYaml(join(dir, 'state'))}`);
    await (await openTestDb(join(dir, 'state'))).close(); // the agent has run here: the window is stored

    const check = await runCli(['check', '--no-retry', '--config', configFile]);
    expect(check.code).toBe(1);
    expect(check.stderr).toMatch(/The API asked the agent to wait until \S+ \(429 on GET \/v1\/auth\/verify\)/);
    expect(check.stderr).toContain('pricing-agent api clear-wait');
    const until = Date.parse(/wait until (\S+) /.exec(check.stderr)?.[1] ?? '');
    expect(until).toBeLessThanOrEqual(Date.now() + FIFTEEN_MIN);
    expect(server.received).toHaveLength(1); // the 429: nothing was sent inside the window

    const status = await runCli(['status', '--json', '--config', configFile]);
    const report = JSON.parse(status.stdout) as { api_wait: { until: string; status: number; path: string } | null; api_key: { state: string } };
    expect(report.api_wait).toMatchObject({ status: 429, method: 'GET', path: '/v1/auth/verify' });
    expect(Date.parse(report.api_wait?.until ?? '')).toBe(until);
    expect(report.api_key.state).toBe('waiting');
    expect(server.received).toHaveLength(1);

    const cleared = await runCli(['api', 'clear-wait', '--config', configFile]);
    expect(cleared.code).toBe(0);
    expect(cleared.stdout).toMatch(/Ended the wait: the API asked the agent to wait until \S+ \(429 on GET \/v1\/auth\/verify\)/);
    const after = JSON.parse((await runCli(['status', '--json', '--config', configFile])).stdout) as typeof report;
    expect(after.api_wait).toBeNull();
    expect(after.api_key.state).toBe('ok');
    expect(server.received).toHaveLength(2);
  });
});

describe('a running daemon', () => {
  let h: DaemonHarness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it('shows the window in /readyz, sends nothing inside it, and notices clear-wait', { timeout: 90_000 }, async () => {
    h = await daemonHarness();
    const harness = h;
    harness.sandbox.control.setRateLimit({ requests: 0, window_seconds: 3_000_000 });
    // A fixed port: the daemon logs its address once started, and its start waits for the key check (in the window).
    const port = await freePort();
    await harness.writeConfig(
      `api:\n  base_url: ${harness.sandbox.url}\n  key_file: ./api-key\n${await harness.stateYaml()}http:\n  port: ${port}\nlog:\n  level: info\n`,
    );
    harness.start();
    const readyzOf = async () => {
      const res = await request(`http://127.0.0.1:${port}/readyz`);
      return { status: res.statusCode, body: JSON.parse(await res.body.text()) as { api_wait?: { status: number; path: string; until: string } } };
    };
    let readyz: Awaited<ReturnType<typeof readyzOf>> | null = null;
    await until(async () => {
      readyz = await readyzOf().catch(() => null);
      return readyz?.body.api_wait !== undefined;
    }, '/readyz to show the window', 30_000);
    expect(readyz).toMatchObject({ status: 503, body: { api_wait: { status: 429, path: '/v1/auth/verify' } } });
    const shown = (readyz as Awaited<ReturnType<typeof readyzOf>> | null)?.body.api_wait;
    expect(Date.parse(shown?.until ?? '')).toBeLessThanOrEqual(Date.now() + FIFTEEN_MIN);
    const limited = harness.sandbox.control.state({ keys: false }).rate_limit;
    expect(limited).toMatchObject({ limited: 1, early_requests: [] });

    harness.sandbox.control.setRateLimit(null); // the API is back; the daemon does not know yet
    const cleared = await runCli(['api', 'clear-wait', '--config', harness.configFile]);
    expect(cleared.code).toBe(0);
    await until(async () => (await readyzOf().catch(() => null))?.status === 200, 'the daemon to verify its key after clear-wait', 30_000);
    expect((await readyzOf()).body.api_wait).toBeUndefined();
  });
});
