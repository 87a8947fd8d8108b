/**
 * The HA pair as `status` shows it (issue 15): this node's name, the lease (holder, token, expiry on the database's
 * clock) and every node that shares the state with its role as it last said. Read from the database, so any node
 * (or a laptop with the same config) sees the whole pair.
 */
import type { Config } from '../config/index.ts';
import { haLeaseState, listHaNodes, type HaNode, type LeaseState } from '../store/ha-lease.ts';
import { hasTable } from '../store/meta.ts';
import type { StateDb } from '../store/state-db.ts';

export interface HaOverview {
  /** ha.enabled in this config. */
  enabled: boolean;
  /** This config's ha.node_name (null without HA). */
  this_node: string | null;
  lease: LeaseState | null;
  nodes: HaNode[];
}

/** Null when this config has no HA and no node ever took the lease (nothing to show). */
export async function haOverview(db: StateDb, config: Config): Promise<HaOverview | null> {
  if (!(await hasTable(db, 'ha_nodes'))) return null;
  const [lease, nodes] = [await haLeaseState(db), await listHaNodes(db)];
  if (!config.ha.enabled && lease === null && nodes.length === 0) return null;
  return { enabled: config.ha.enabled, this_node: config.ha.enabled ? config.ha.node_name : null, lease, nodes };
}
