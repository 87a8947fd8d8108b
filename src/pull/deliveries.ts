/**
 * Reading approved prices page by page through the replayable deliveries endpoint into the outbox.
 *
 * Per page: (1) a delivery intent (fresh request_id, filters, cursor, page size) is committed, (2) the request is
 * sent, (3) the page is stored in ONE transaction with the next cursor and the intent marked done
 * (storeDeliveredPage); the same transaction records the intent of the following page (its step 1), so a page
 * costs one commit. What survives a crash at each point:
 * - before (1) commits: nothing happened; the next run records a new intent at the same cursor.
 * - between (1) and (3): the intent is pending. The next run replays it first, with the same request_id, and the
 *   server answers the page it handed out (maybe already marked exported on its side), so no row is lost.
 * - after (3): rows, feed rows and cursor are committed together; the listing continues at the next cursor.
 * The server never sees an acknowledgement for a page before it is committed here (acknowledge.ts runs after).
 *
 * Ways out (docs/api-assumptions.md): a replay the server refuses (its request_id expired or unknown: 404, 409, 410
 * or 422) is recovered from the history (recoverFromHistory) and the intent completed with what it shows; a stored
 * cursor the server refuses starts the listing over from the beginning (versions stored already come again as
 * duplicates). A row the agent cannot read (no id, no price) is logged and left unacknowledged on the platform; it
 * never blocks its page. Every request says `filters.history: false`: its default on deliveries is not stated.
 */
import { randomUUID } from 'node:crypto';
import type { Page } from '../api/call.ts';
import type { UnreadableRow } from '../api/resources/approved-prices.ts';
import { instantOf, type ApprovedPrice, type ApprovedPriceFilters, type DeliveryRequest } from '../api/schemas/index.ts';
import { getApprovedPrice, storeDeliveredPage, type StoredPage } from '../store/approved-prices.ts';
import {
  abandonDeliveryIntent,
  type DeliveryIntent,
  lastDoneFilters,
  type NewDeliveryIntent,
  pendingDeliveryIntent,
  pullCursor,
  recordDeliveryIntent,
} from '../store/delivery-intents.ts';
import { isAcknowledgedStatus } from './conflict-resolution.ts';
import { historyPages } from './history-read.ts';
import { checkAborted, type PullDeps } from './pull-deps.ts';
import { isRefusedCursor, isRefusedReplay } from './refusals.ts';

export interface DeliverySettings {
  /** The spec's filters, without history. */
  readonly filters: Omit<ApprovedPriceFilters, 'history'>;
  /** pagination.limit, 1..500. */
  readonly pageSize: number;
  /** How far back the history is read to recover a page whose replay is refused; 0: the whole history. */
  readonly recoveryLookbackDays: number;
}

export interface DeliveryStats {
  pages: number;
  /** Pending intents of an earlier run sent again with their request_id. */
  replayed: number;
  /** Pending intents the server refused to replay; their page was recovered from the history. */
  abandoned: number;
  /** Versions recovered from the history for a replay the server refused. */
  recovered: number;
  /** Listings started over because the server refused the stored cursor. */
  restarted: number;
  /** Delivered rows the agent could not read (logged, not stored, not acknowledged). */
  unreadable: number;
  rows: number;
  /** Versions stored for the first time. */
  inserted: number;
  /** Versions that were already stored (a replayed page, a delivery of a version not acknowledged yet). */
  duplicates: number;
  feedRows: number;
}

export function emptyDeliveryStats(): DeliveryStats {
  return { pages: 0, replayed: 0, abandoned: 0, recovered: 0, restarted: 0, unreadable: 0, rows: 0, inserted: 0, duplicates: 0, feedRows: 0 };
}

/**
 * Replays the pending intent of an interrupted run, if any, then pages from the checkpointed cursor (or, after a
 * replayed last page, from the beginning) until the server says the listing is complete (next_cursor null). Throws on any API or store error: whatever was committed
 * stays, and the next run resumes from it.
 */
export async function pullDeliveries(
  deps: PullDeps,
  settings: DeliverySettings,
  stats: DeliveryStats,
  signal?: AbortSignal,
  onStored: () => void = () => undefined,
): Promise<void> {
  const { db } = deps;
  checkAborted(signal);
  let intent: DeliveryIntent | undefined;
  const pending = await pendingDeliveryIntent(db);
  if (pending) {
    const replayed = await replay(deps, pending, settings, stats, signal);
    onStored();
    // A replay answers as the server did when the interrupted run asked. When that page was the last of its listing,
    // approvals since then are not in it: a fresh listing (below) asks for them now, not at the next run.
    if (!replayed.complete) intent = replayed.nextIntent;
  }
  intent ??= await recordDeliveryIntent(db, {
    requestId: randomUUID(),
    filters: settings.filters,
    cursor: await startCursor(deps, settings.filters),
    limit: settings.pageSize,
  });
  let restarted = false;
  for (;;) {
    checkAborted(signal);
    let page: Page<ApprovedPrice>;
    try {
      page = await fetchPage(deps, intent, stats, signal);
    } catch (error) {
      // The server no longer accepts the stored cursor: start the listing over, once per run.
      if (restarted || intent.cursor === null || !isRefusedCursor(error)) throw error;
      deps.logger.warn({ error: (error as Error).message }, 'the server refused the stored delivery cursor: the listing starts over');
      await abandonDeliveryIntent(db, intent.id);
      stats.restarted += 1;
      restarted = true;
      intent = await recordDeliveryIntent(db, { ...nextIntent(settings), cursor: null });
      continue;
    }
    // The next page's intent is committed with this page: durable before its request, one commit per page.
    const stored = await store(deps, intent, page, stats, nextIntent(settings));
    onStored();
    if (page.nextCursor === null || !stored.nextIntent) return;
    intent = stored.nextIntent;
  }
}

function nextIntent(settings: DeliverySettings): Omit<NewDeliveryIntent, 'cursor'> {
  return { requestId: randomUUID(), filters: settings.filters, limit: settings.pageSize };
}

/**
 * Sends a pending intent again and stores its page. When the server refuses the replay, the page it may have handed
 * out under that request_id is recovered from the history and stored in its place (the cursor stays where the
 * intent had it). Returns whether the listing is complete, and the next intent when it goes on under the same
 * filters (otherwise the caller starts a new one from startCursor).
 */
async function replay(
  deps: PullDeps,
  intent: DeliveryIntent,
  settings: DeliverySettings,
  stats: DeliveryStats,
  signal: AbortSignal | undefined,
): Promise<{ complete: boolean; nextIntent?: DeliveryIntent | undefined }> {
  deps.logger.info({ request_id: intent.request_id, cursor: intent.cursor }, 'replaying the delivery of an interrupted run');
  // A cursor of a listing under other filters is not continued (startCursor starts over instead).
  const sameFilters = canonical(intent.filters) === canonical(settings.filters);
  const next = sameFilters ? nextIntent(settings) : undefined;
  let page: Page<ApprovedPrice>;
  try {
    page = await fetchPage(deps, intent, stats, signal);
  } catch (error) {
    if (!isRefusedReplay(error)) throw error;
    deps.logger.warn({ request_id: intent.request_id, error: (error as Error).message }, 'delivery replay refused; recovering its page from the history');
    const recovered = await recoverFromHistory(deps, intent, settings, signal);
    stats.abandoned += 1;
    stats.recovered += recovered.length;
    const stored = await store(deps, intent, { items: recovered, nextCursor: intent.cursor, serverDate: null }, stats, next);
    return { complete: false, nextIntent: stored.nextIntent };
  }
  stats.replayed += 1;
  const stored = await store(deps, intent, page, stats, next);
  return { complete: page.nextCursor === null, nextIntent: stored.nextIntent };
}

/** Clock skew and server lag allowed around an intent's time when the history is searched for its page. */
const RECOVERY_MARGIN_MS = 10 * 60 * 1000; // 10 min
const DAY_MS = 86_400_000;

/**
 * The versions a lost delivery page may have held, from the history (read-only): approved before the request, not
 * cancelled, delivered around the request (exported_at, when the server sends it, no earlier than the request less
 * a margin) and not acknowledged yet, and not stored here. They are stored and acknowledged like a delivered page,
 * so a server that delivers each row once (and will not replay an expired request_id) loses no approved price. On a
 * server that delivers unacknowledged rows again, the next pages bring them anyway and they are duplicates there.
 */
async function recoverFromHistory(
  deps: PullDeps,
  intent: DeliveryIntent,
  settings: DeliverySettings,
  signal: AbortSignal | undefined,
): Promise<ApprovedPrice[]> {
  const at = Date.parse(intent.created_at);
  const { history: _history, ...filters } = intent.filters;
  const query = {
    ...filters,
    approved_before: new Date(at + RECOVERY_MARGIN_MS).toISOString(),
    ...(settings.recoveryLookbackDays > 0 ? { approved_after: new Date(at - settings.recoveryLookbackDays * DAY_MS).toISOString() } : {}),
  };
  const found: ApprovedPrice[] = [];
  for await (const page of historyPages(deps.client, query, signal)) {
    for (const version of page.items) {
      if (version.cancelled_at != null || version.export_status === 'pending' || isAcknowledgedStatus(version.export_status)) continue;
      if (version.exported_at != null && instantOf(version.exported_at) < at - RECOVERY_MARGIN_MS) continue;
      if ((await getApprovedPrice(deps.db, version.id)) === undefined) found.push(version);
    }
    checkAborted(signal);
  }
  deps.logger.info({ request_id: intent.request_id, versions: found.length }, 'delivery page recovered from the history');
  return found.sort((a, b) => a.id - b.id);
}

async function fetchPage(
  deps: PullDeps,
  intent: DeliveryIntent,
  stats: DeliveryStats,
  signal: AbortSignal | undefined,
): Promise<Page<ApprovedPrice>> {
  const pagination: NonNullable<DeliveryRequest['pagination']> = {};
  if (intent.page_limit !== null) pagination.limit = intent.page_limit;
  if (intent.cursor !== null) pagination.cursor = intent.cursor;
  const page = await deps.client.approvedPrices.deliveries(
    { request_id: intent.request_id, filters: { ...intent.filters, history: false }, pagination },
    { signal },
  );
  if (page.unreadable.length > 0) reportUnreadable(deps, intent, page.unreadable, stats);
  return page;
}

/**
 * Rows of a page the agent cannot read: not stored, so never acknowledged; the platform keeps them waiting, and the
 * log says which and why (a person can look them up in the web application).
 */
function reportUnreadable(deps: PullDeps, intent: DeliveryIntent, rows: readonly UnreadableRow[], stats: DeliveryStats): void {
  stats.unreadable += rows.length;
  const ids = rows.map((r) => (typeof r.raw === 'object' && r.raw !== null && 'id' in r.raw ? r.raw.id : null));
  deps.logger.error(
    { request_id: intent.request_id, rows: rows.length, ids: ids.slice(0, 20), problem: rows[0]?.problem },
    'delivered approved prices the agent cannot read: not stored and not acknowledged (the rest of the page is)',
  );
}

async function store(
  deps: PullDeps,
  intent: DeliveryIntent,
  page: Page<ApprovedPrice>,
  stats: DeliveryStats,
  next: Omit<NewDeliveryIntent, 'cursor'> | undefined,
): Promise<StoredPage> {
  const stored = await storeDeliveredPage(deps.db, intent.id, page.items, page.nextCursor, next);
  if (deps.onVersionsStored && stored.inserted > 0) {
    const fresh = new Set(stored.insertedIds);
    deps.onVersionsStored(page.items.filter((item) => fresh.has(item.id)), deps.clock.now());
  }
  stats.pages += 1;
  stats.rows += page.items.length;
  stats.inserted += stored.inserted;
  stats.duplicates += stored.duplicates;
  stats.feedRows += stored.feedRows;
  deps.logger.debug(
    { request_id: intent.request_id, rows: page.items.length, inserted: stored.inserted, last_seq: stored.lastSeq },
    'delivery page stored',
  );
  return stored;
}

/**
 * The cursor to continue from: the checkpoint, unless the filters changed since the listing it belongs to (a
 * cursor of another listing could skip rows); then the listing starts over, and versions stored already come
 * again as duplicates.
 */
async function startCursor(deps: PullDeps, filters: DeliverySettings['filters']): Promise<string | null> {
  const cursor = await pullCursor(deps.db);
  if (cursor === null) return null;
  const last = await lastDoneFilters(deps.db);
  if (last !== undefined && canonical(JSON.parse(last) as object) !== canonical(filters)) {
    deps.logger.info('pull filters changed: the listing starts over from the beginning');
    return null;
  }
  return cursor;
}

/** Filters as comparable text: keys sorted, unset keys left out. */
function canonical(filters: object): string {
  const entries = Object.entries(filters).filter(([, value]) => value !== undefined && value !== null);
  return JSON.stringify(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
