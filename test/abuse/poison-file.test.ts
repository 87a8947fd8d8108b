/**
 * Issue 27, point 5: a file that kills the agent must not keep it down. Real `pricing-agent push` child processes
 * are SIGKILLed while the file is in progress (as the out-of-memory killer or a crash would end them): after two
 * deaths in a row with nothing committed in between, the next start sets the file aside in failed/ with
 * CRASHED_AGENT instead of resuming it a third time. One death alone is resumed as before, and deaths with progress
 * in between are resumed each time (test/integration/push-crash.test.ts kills a large file three times).
 *
 * The API here holds every request unanswered, so that nothing of the file is committed between the kills: each
 * kill lands where the ledger shows the attempt began, never on a timer.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.ts';
import { transactionsFile, writeAgentConfig } from '../fixtures/push/push-fixtures.ts';
import { readReport } from '../fixtures/push/push-report.ts';
import { abuseSize } from '../support/abuse.ts';
import { ledger, startAgent, waitForLedger } from '../support/push-child.ts';

const TIMEOUT_MS = 180_000;

/** An API that reads every request and never answers it: an attempt stays in flight until it is killed. */
async function silentApi(): Promise<{ url: string; requests: () => IncomingMessage[]; close: () => Promise<void> }> {
  const requests: IncomingMessage[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req) => {
    requests.push(req);
    req.resume();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function setUp(baseUrl: string, rows: number) {
  const dir = await mkdtemp(join(tmpdir(), 'pa-poison-'));
  const inbox = join(dir, 'inbox');
  await mkdir(inbox, { recursive: true });
  const config = await writeAgentConfig(dir, baseUrl, [{ name: 'poison', path: './inbox', entity: 'transactions', batch_size: 1000 }]);
  const file = await transactionsFile(join(inbox, 'poison.csv'), rows, { prefix: 'PO' });
  return { inbox, config, file, dbPath: join(dir, 'state', 'pricing-agent.db'), args: ['push', file.path, '--source', 'poison', '--config', config, '--json'] };
}

function crashesOf(dbPath: string): { crashes: number; attempt_progress: number | null } {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT crashes, attempt_progress FROM push_files ORDER BY id DESC LIMIT 1').get() as { crashes: number; attempt_progress: number | null };
  } finally {
    db.close();
  }
}

describe('a file the agent dies on', () => {
  let api: Awaited<ReturnType<typeof silentApi>>;
  let sandbox: SandboxHandle;
  beforeAll(async () => {
    api = await silentApi();
    sandbox = await startSandbox({ approvals: 0, largeGridRows: 0 });
  });
  afterAll(async () => {
    await api.close();
    await sandbox.close();
  });

  it('is set aside in failed/ with CRASHED_AGENT after two deaths in a row, not resumed a third time', { timeout: TIMEOUT_MS }, async () => {
    const { inbox, dbPath, args } = await setUp(api.url, abuseSize(5_000, 200_000));
    for (const death of [1, 2]) {
      const agent = startAgent(args, sandbox.apiKey);
      // The attempt began (its mark is committed) and its first batch is on the wire, unanswered.
      await waitForLedger(agent, dbPath, `attempt ${death} in flight`, (l) => l.started && l.status === 'claimed' && api.requests().some((r) => r.url?.includes('/bulk') === true));
      await agent.kill();
      expect(ledger(dbPath).batches, 'nothing committed between the deaths').toBe(0);
      api.requests().length = 0;
    }

    const third = await startAgent(args, sandbox.apiKey).exited;
    expect(third.code, third.stderr).toBe(4);
    expect(api.requests().filter((r) => r.url?.includes('/bulk') === true), 'the third start sent nothing of the file').toEqual([]);
    const out = JSON.parse(third.stdout) as { outcome: string; report: string; error?: { code: string; message: string } };
    expect(out.outcome).toBe('failed');
    const report = await readReport(out.report);
    expect(report.error?.code).toBe('CRASHED_AGENT');
    expect(report.error?.message).toMatch(/died 2 times in a row while this file was in progress.*pricing-agent files retry \d+/);
    expect(await readdir(join(inbox, 'failed'))).toContain('poison.csv');
    expect(await readdir(join(inbox, 'processing'))).toEqual([]);
    expect(crashesOf(dbPath), 'the ledger keeps how many deaths set it aside').toMatchObject({ crashes: 2 });
  });

  it('is resumed after one death, and the count starts again once an attempt ends', { timeout: TIMEOUT_MS }, async () => {
    const { dbPath, args, file } = await setUp(sandbox.url, 5_000);
    const first = startAgent(args, sandbox.apiKey);
    await waitForLedger(first, dbPath, 'the attempt to begin', (l) => l.started);
    await first.kill();
    const second = await startAgent(args, sandbox.apiKey).exited;
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ outcome: 'done', rows: { accepted: file.validKeys.length } });
    expect(crashesOf(dbPath)).toEqual({ crashes: 0, attempt_progress: null });
    expect(existsSync(file.path)).toBe(false);
  });
});
