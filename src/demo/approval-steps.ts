/**
 * The approvals part of the demo. The daemon does the work (its scheduled jobs: the approved-prices pull with its
 * per-store files, and the history reconciliation; the demo config runs both every 2 seconds); the demo changes the
 * platform in between and watches the outcome, as a person would, in two rounds:
 *
 * 1. the pull at start-up stores every approval waiting on the platform, acknowledges it and writes per-store files;
 * 2. the platform (the sandbox's control handle) amends a few acknowledged prices (a new version supersedes the old
 *    one), cancels a few, and approves new ones for every store; the next runs store and acknowledge the new versions
 *    and withdraw the cancelled ones (a withdrawal row each in the feed, found by the reconciliation).
 *
 * A round is complete when the outbox agrees with the platform's own book: every current version acknowledged once,
 * every demo cancellation withdrawn, and every feed row written to a per-store file. The demo only reads the state
 * database (its own read-only connection, as `status` does).
 */
import type { SandboxControl } from '../sandbox/index.ts';
import { countAckStatus } from '../store/acknowledgements.ts';
import { acknowledgedStoreVersions, countWithdrawn } from '../store/approved-prices.ts';
import { exportScanSeq } from '../store/outbox-exports.ts';
import { maxSeq } from '../store/price-feed.ts';
import type { StateDb } from '../store/state-db.ts';

export const DEMO_AMENDMENTS = 5;
export const DEMO_CANCELLATIONS = 3;
export const DEMO_NEW_APPROVALS = 20;
/** Both rounds must complete within this (the jobs run every 2 s). */
export const ROUND_TIMEOUT_MS = 30 * 1000; // 30 s

export interface PlatformChanges {
  /** Ids of acknowledged versions the platform amended (each now has a successor). */
  readonly amended: number[];
  readonly cancelled: number[];
  readonly injected: number;
}

/** What is still missing for the outbox to agree with the platform; empty when the round is complete. */
export async function outstanding(db: StateDb, control: SandboxControl, cancelled: readonly number[]): Promise<string[]> {
  const missing: string[] = [];
  const current = control.world.approvals.all().filter((a) => a.cancelled_at === null && a.supersededBy === null);
  const unacked = current.filter((a) => a.ackCount !== 1).length;
  if (unacked > 0) missing.push(`${unacked} current approvals not acknowledged yet`);
  const pending = await countAckStatus(db, 'pending');
  if (pending > 0) missing.push(`${pending} stored versions waiting for acknowledgement`);
  const withdrawn = await countWithdrawn(db, cancelled);
  if (withdrawn < cancelled.length) missing.push(`${cancelled.length - withdrawn} cancellations not withdrawn yet`);
  const feed = await maxSeq(db);
  const exported = await exportScanSeq(db);
  if (feed === 0 || exported < feed) missing.push(`feed rows up to seq ${feed}, per-store files up to ${exported}`);
  return missing;
}

/** Resolves when the round is complete; polls the database (the daemon writes it meanwhile). */
export async function waitForRound(db: StateDb, control: SandboxControl, cancelled: readonly number[], what: string): Promise<void> {
  const deadline = Date.now() + ROUND_TIMEOUT_MS;
  for (;;) {
    const missing = await outstanding(db, control, cancelled);
    if (missing.length === 0) return;
    if (Date.now() > deadline) throw new Error(`${what} did not complete within ${ROUND_TIMEOUT_MS / 1000} s: ${missing.join('; ')} (see the agent log)`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Round 2's changes on the platform, to acknowledged store-level versions (oldest first). */
export async function changePlatform(db: StateDb, control: SandboxControl): Promise<PlatformChanges> {
  const ids = await acknowledgedStoreVersions(db, DEMO_AMENDMENTS + DEMO_CANCELLATIONS);
  const amended = ids.slice(0, DEMO_AMENDMENTS);
  const cancelled = ids.slice(DEMO_AMENDMENTS);
  for (const id of amended) control.amend(id, { reason: 'Competitor price change' });
  for (const id of cancelled) control.cancel(id);
  const injected = control.injectApprovals({ count: DEMO_NEW_APPROVALS }).length;
  return { amended, cancelled, injected };
}
