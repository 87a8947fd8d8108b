/**
 * Reading approved-price versions back from the registered history (`GET /v1/approved_prices?history=true`). The
 * history read is read-only on the platform: it moves nothing out of the pending set, so it is safe to retry and to
 * repeat. Every call here sets history=true explicitly; the destructive default read is never used by the agent.
 *
 * The history has no filter by id. To find a set of ids, the agent reads the window of approval times they lie in
 * (approved_after/approved_before are inclusive), newest first, and stops as soon as it has them all. Ids are first
 * grouped into clusters of ids close to each other (by how many stored versions lie between them), so a handful of
 * conflicts spread over a week costs a few small windows, not a read of the whole week.
 */
import type { ApiClient } from '../api/client.ts';
import type { ApprovedPriceListQuery } from '../api/resources/approved-prices.ts';
import { ACK_BATCH_MAX, instantOf, type ApprovedPrice, type ApprovedPriceFilters } from '../api/schemas/index.ts';
import { countStoredBetween, storedApprovedAt } from '../store/approved-prices.ts';
import { checkAborted, type PullDeps } from './pull-deps.ts';

/** Widening of a history window on each side (servers that show times without fractions). */
const WINDOW_MARGIN_MS = 1000;

/** Stored versions between two ids of one cluster, at most: about one history page each side. */
const CLUSTER_GAP = ACK_BATCH_MAX;

export type HistoryFilters = Omit<ApprovedPriceFilters, 'history'>;

export interface HistoryReadStats {
  historyPages: number;
}

/** Pages of the registered history matching `query`, newest first. Read-only. */
export function historyPages(
  client: ApiClient,
  query: Omit<ApprovedPriceListQuery, 'history'>,
  signal: AbortSignal | undefined,
) {
  return client.approvedPrices.list({ limit: ACK_BATCH_MAX, ...query, history: true }, { signal });
}

interface Located {
  id: number;
  approved_at: string;
}

/**
 * The current version of each id as the history shows it. Ids the history does not show (unknown to the platform,
 * or outside the window) are missing from the map. `filters` narrow the windows (the pull's store_id, grid_id...);
 * an id not found under them is looked for once more in its own instant without filters.
 */
export async function readVersions(
  deps: PullDeps,
  ids: readonly number[],
  filters: HistoryFilters,
  stats: HistoryReadStats,
  signal?: AbortSignal,
): Promise<Map<number, ApprovedPrice>> {
  const found = new Map<number, ApprovedPrice>();
  const located = await storedApprovedAt(deps.db, ids);
  const narrow = { grid_id: filters.grid_id, store_id: filters.store_id, item_id: filters.item_id, sku: filters.sku };
  for (const cluster of await clusters(deps, located)) {
    await readWindow(deps, cluster, narrow, found, stats, signal);
  }
  for (const one of located) {
    if (!found.has(one.id)) await readWindow(deps, [one], {}, found, stats, signal);
  }
  return found;
}

/**
 * A successor of `version` (an amendment naming it as predecessor), from the history of the same item and store
 * approved at or after it; undefined when there is none.
 */
export async function findSuccessor(
  deps: PullDeps,
  version: ApprovedPrice,
  stats: HistoryReadStats,
  signal?: AbortSignal,
): Promise<ApprovedPrice | undefined> {
  const query: Omit<ApprovedPriceListQuery, 'history'> = { approved_after: version.approved_at };
  if (version.item_id != null) query.item_id = version.item_id;
  if (version.store_id != null) query.store_id = version.store_id;
  for await (const page of historyPages(deps.client, query, signal)) {
    stats.historyPages += 1;
    const successor = page.items.find((item) => item.predecessor_id === version.id);
    if (successor) return successor;
  }
  return undefined;
}

/** Splits id-ordered versions where more than CLUSTER_GAP stored versions lie between two neighbours. */
async function clusters(deps: PullDeps, located: readonly Located[]): Promise<Located[][]> {
  const out: Located[][] = [];
  let current: Located[] = [];
  for (const one of located) {
    const previous = current[current.length - 1];
    if (previous && (await countStoredBetween(deps.db, previous.id, one.id)) > CLUSTER_GAP) {
      out.push(current);
      current = [];
    }
    current.push(one);
  }
  if (current.length > 0) out.push(current);
  return out;
}

async function readWindow(
  deps: PullDeps,
  cluster: readonly Located[],
  filters: HistoryFilters,
  found: Map<number, ApprovedPrice>,
  stats: HistoryReadStats,
  signal: AbortSignal | undefined,
): Promise<void> {
  const wanted = new Set(cluster.map((c) => c.id).filter((id) => !found.has(id)));
  if (wanted.size === 0) return;
  // A second more on each side: a server may show its times at a coarser precision than it compares them (no
  // fractions), and the window must still hold the versions. Rows outside the cluster are skipped by id.
  const instants = cluster.map((c) => instantOf(c.approved_at));
  const query: Omit<ApprovedPriceListQuery, 'history'> = {
    approved_after: new Date(Math.min(...instants) - WINDOW_MARGIN_MS).toISOString(),
    approved_before: new Date(Math.max(...instants) + WINDOW_MARGIN_MS).toISOString(),
  };
  for (const [key, value] of Object.entries(filters) as [keyof HistoryFilters, string | undefined][]) {
    if (value !== undefined) query[key] = value;
  }
  checkAborted(signal);
  for await (const page of historyPages(deps.client, query, signal)) {
    stats.historyPages += 1;
    for (const item of page.items) {
      if (wanted.delete(item.id)) found.set(item.id, item);
    }
    if (wanted.size === 0) return;
  }
}
