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
 */
import { randomUUID } from 'node:crypto';
import { ApiValidationError } from '../api/errors.ts';
import type { Page } from '../api/call.ts';
import type { ApprovedPrice, ApprovedPriceFilters, DeliveryRequest } from '../api/schemas/index.ts';
import { storeDeliveredPage, type StoredPage } from '../store/approved-prices.ts';
import {
  abandonDeliveryIntent,
  type DeliveryIntent,
  lastDoneFilters,
  type NewDeliveryIntent,
  pendingDeliveryIntent,
  pullCursor,
  recordDeliveryIntent,
} from '../store/delivery-intents.ts';
import { checkAborted, type PullDeps } from './pull-deps.ts';

export interface DeliverySettings {
  /** The spec's filters, without history. */
  readonly filters: Omit<ApprovedPriceFilters, 'history'>;
  /** pagination.limit, 1..500. */
  readonly pageSize: number;
}

export interface DeliveryStats {
  pages: number;
  /** Pending intents of an earlier run sent again with their request_id. */
  replayed: number;
  /** Pending intents the server refused to replay (422), given up without a page. */
  abandoned: number;
  rows: number;
  /** Versions stored for the first time. */
  inserted: number;
  /** Versions that were already stored (a replayed page, a delivery of a version not acknowledged yet). */
  duplicates: number;
  feedRows: number;
}

export function emptyDeliveryStats(): DeliveryStats {
  return { pages: 0, replayed: 0, abandoned: 0, rows: 0, inserted: 0, duplicates: 0, feedRows: 0 };
}

/**
 * Replays the pending intent of an interrupted run, if any, then pages from the checkpointed cursor until the
 * server says the listing is complete (next_cursor null). Throws on any API or store error: whatever was committed
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
    if (replayed !== undefined) onStored();
    // The replayed page was the last of its listing: the listing is complete.
    if (replayed?.nextCursor === null) return;
    intent = replayed?.nextIntent;
  }
  intent ??= await recordDeliveryIntent(db, {
    requestId: randomUUID(),
    filters: settings.filters,
    cursor: await startCursor(deps, settings.filters),
    limit: settings.pageSize,
  });
  for (;;) {
    checkAborted(signal);
    const page = await fetchPage(deps, intent, signal);
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
 * Sends a pending intent again and stores its page; returns the stored page (with the next intent when the listing
 * goes on under the same filters), or undefined when the server refused the replay and the intent was abandoned.
 */
async function replay(
  deps: PullDeps,
  intent: DeliveryIntent,
  settings: DeliverySettings,
  stats: DeliveryStats,
  signal: AbortSignal | undefined,
): Promise<(StoredPage & { nextCursor: string | null }) | undefined> {
  deps.logger.info({ request_id: intent.request_id, cursor: intent.cursor }, 'replaying the delivery of an interrupted run');
  let page: Page<ApprovedPrice>;
  try {
    page = await fetchPage(deps, intent, signal);
  } catch (error) {
    // The server no longer knows the request_id and refuses it: the page it may have handed out under that id is
    // not stored. Its versions were never acknowledged, so the platform delivers them again from the cursor.
    if (!(error instanceof ApiValidationError)) throw error;
    await abandonDeliveryIntent(deps.db, intent.id);
    stats.abandoned += 1;
    deps.logger.warn({ request_id: intent.request_id, error: error.message }, 'delivery replay refused; abandoned');
    return undefined;
  }
  stats.replayed += 1;
  // A cursor of a listing under other filters is not continued (startCursor starts over instead).
  const sameFilters = canonical(intent.filters) === canonical(settings.filters);
  const stored = await store(deps, intent, page, stats, sameFilters ? nextIntent(settings) : undefined);
  return { ...stored, nextCursor: page.nextCursor };
}

function fetchPage(deps: PullDeps, intent: DeliveryIntent, signal: AbortSignal | undefined): Promise<Page<ApprovedPrice>> {
  const pagination: NonNullable<DeliveryRequest['pagination']> = {};
  if (intent.page_limit !== null) pagination.limit = intent.page_limit;
  if (intent.cursor !== null) pagination.cursor = intent.cursor;
  return deps.client.approvedPrices.deliveries(
    { request_id: intent.request_id, filters: intent.filters, pagination },
    { signal },
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
