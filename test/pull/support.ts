/**
 * The pull wired to a real sandbox over HTTP and a real SQLite file in a temp dir, and what the pull tests assert
 * with: the sandbox's history (the truth) against the outbox.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { expect } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import type { TransportHooks } from '../../src/api/transport.ts';
import { systemClock, type Clock } from '../../src/clock.ts';
import type { PullDeps } from '../../src/pull/pull-deps.ts';
import { startSandbox, type SandboxHandle, type SandboxOptions } from '../../src/sandbox/index.ts';
import { openTestDb } from '../support/state-db.ts';
import type { StateDb } from '../../src/store/state-db.ts';
import { captureLogger } from '../support/test-logger.ts';
import { sqlColumn, sqlRows } from '../support/state-sql.ts';

export interface PullHarness {
  dir: string;
  sandbox: SandboxHandle;
  db: StateDb;
  client: ApiClient;
  deps: PullDeps;
  logLines: () => Record<string, unknown>[];
  close(): Promise<void>;
}

export async function pullHarness(options: { sandbox?: SandboxOptions; clock?: Clock; hooks?: TransportHooks } = {}): Promise<PullHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'pa-pull-'));
  const sandbox = await startSandbox({ approvals: 0, largeGridRows: 0, ...options.sandbox });
  const clock = options.clock ?? systemClock;
  const db = await openTestDb(dir, { now: () => clock.now() });
  const dispatcher = new Agent({ allowH2: false, connections: 4 });
  const client = new ApiClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey, dispatcher, clock, ...(options.hooks ? { hooks: options.hooks } : {}) });
  const { logger, lines } = captureLogger('debug');
  return {
    dir,
    sandbox,
    db,
    client,
    deps: { db, client, clock, logger },
    logLines: lines,
    async close() {
      await db.close();
      await dispatcher.close();
      await sandbox.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A sandbox approval as the test sees it: the wire fields plus the bookkeeping the sandbox keeps. */
export interface SandboxApproval {
  id: number;
  item_id: string | null;
  store_id: string | null;
  sku: string | null;
  approved_price: string;
  currency_code: string;
  effective_date: string | null;
  approved_at: string;
  cancelled_at: string | null;
  predecessor_id: number | null;
  supersededBy: number | null;
  export_status: string;
  ackCount: number;
}

export function sandboxApprovals(sandbox: SandboxHandle): readonly SandboxApproval[] {
  return sandbox.control.world.approvals.all();
}

/** Current versions on the platform: neither cancelled nor superseded (what a complete pull must hold). */
export function currentVersions(sandbox: SandboxHandle): SandboxApproval[] {
  return sandboxApprovals(sandbox).filter((a) => a.cancelled_at === null && a.supersededBy === null);
}

export interface ExpectedPrice {
  item_id: string;
  store_key: string;
  approved_price: string;
  effective_date: string;
  approval_id: number;
}

/**
 * The prices in force on `date`, computed from the sandbox's versions independently of the view: per (item, store),
 * among current versions effective on or before `date` (no effective date: the approval's UTC day), the latest
 * effective date, then the latest approval, then the highest id.
 */
export function expectedPricesAt(sandbox: SandboxHandle, date: string): ExpectedPrice[] {
  const best = new Map<string, SandboxApproval & { from: string }>();
  for (const a of currentVersions(sandbox)) {
    if (a.item_id === null) continue;
    const from = a.effective_date ?? a.approved_at.slice(0, 10);
    if (from > date) continue;
    const key = `${a.item_id}\u0000${a.store_id ?? '_all'}`;
    const held = best.get(key);
    const wins =
      !held ||
      from > held.from ||
      (from === held.from && (Date.parse(a.approved_at) > Date.parse(held.approved_at) ||
        (a.approved_at === held.approved_at && a.id > held.id)));
    if (wins) best.set(key, { ...a, from });
  }
  return [...best.values()]
    .map((a) => ({
      item_id: a.item_id ?? '',
      store_key: a.store_id ?? '_all',
      approved_price: a.approved_price,
      effective_date: a.from,
      approval_id: a.id,
    }))
    .sort((x, y) => (x.item_id === y.item_id ? cmp(x.store_key, y.store_key) : cmp(x.item_id, y.item_id)));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The end state of a complete pull, whatever the dialect: every current version stored and acknowledged exactly
 * once (on the platform: one acknowledgement, no batch that sent it again once acknowledged), nothing left pending
 * in the outbox, and one 'price' feed row per stored version.
 */
export async function expectPullComplete(h: PullHarness): Promise<void> {
  const current = currentVersions(h.sandbox);
  const local = new Map(
    (await sqlRows<{ id: number; status: string | null }>(h.db, 'SELECT a.id, k.status FROM approved_prices a LEFT JOIN approval_acks k ON k.approval_id = a.id')).map(
      (r) => [r.id, r.status],
    ),
  );
  for (const a of current) {
    if (a.item_id === null && a.store_id === null && a.sku === null) continue;
    expect(local.get(a.id), `local state of ${a.id}`).toBe('acknowledged');
    expect(a.ackCount, `ack count of ${a.id}`).toBe(1);
  }
  for (const ack of h.sandbox.control.state().approvals.acks) {
    expect(ack.ack_count, `ack count of ${ack.id}`).toBeLessThanOrEqual(1);
    expect(ack.conflicting_acks + ack.repeat_acks, `repeated acknowledgements of ${ack.id}`).toBe(0);
  }
  expect([...local.values()].filter((s) => s === 'pending')).toEqual([]);
  const prices = (await sqlColumn<number>(h.db, `SELECT approval_id FROM price_feed WHERE kind = 'price'`));
  expect(new Set(prices).size).toBe(prices.length);
  expect(prices.length).toBe(local.size);
}

/** Counts the API's answers by operation and status (a transport hook). */
export function answerCounter(): { hook: (e: { operation: string; status: number }) => void; count(operation: string, status?: number): number } {
  const answers: { operation: string; status: number }[] = [];
  return {
    hook: (e) => answers.push({ operation: e.operation, status: e.status }),
    count: (operation, status) => answers.filter((a) => a.operation === operation && (status === undefined || a.status === status)).length,
  };
}
