/**
 * The HA lease (issue 15): which node of a pair sharing one PostgreSQL state is the active one, and the fencing that
 * keeps a node whose lease ended from committing anything. Tables: migration 0009_ha_lease (what each column means).
 *
 * Rules, all on the database's clock (now()), never a node's own:
 * - A node takes the lease when there is none, when it has expired, or when it names this node already (a restart
 *   of the active). Every take adds one to the token: the old holder's token is stale from that instant.
 * - The holder renews it (every lease / 3, the daemon's job): expires_at moves to now() + lease. A renewal that finds
 *   the row changed or expired fails: the lease is lost.
 * - Fencing: once `fence(token)` is set, every write transaction of this handle that does the agent's work (all but
 *   a feed consumer's own bookkeeping, WriteOptions.owner 'consumer', which any node stores) first runs
 *   `SELECT ... FROM ha_lease WHERE holder = me AND token = t AND expires_at > now() FOR SHARE` and is refused
 *   (StoreError FENCED, nothing committed) when the row is not there. The share lock makes a takeover's UPDATE wait
 *   for the old holder's transactions in flight, so none of them commits after the new holder took over. A holder
 *   frozen inside a transaction holds that lock until PostgreSQL ends its session
 *   (idle_in_transaction_session_timeout, set below the lease by the daemon: library notes).
 * - Lease statements run outside the fence (single statements, autocommit): taking or renewing the lease must work
 *   when the fence would refuse.
 *
 * Not session advisory locks: a SIGSTOPped holder's kernel keeps its connection alive, so the lock stays held; and
 * behind PgBouncer another node may be handed the same server session (library notes).
 */
import { StoreError } from './errors.ts';
import { SqlDb } from './sql-db.ts';
import type { StateDb } from './state-db.ts';

/** The lease as the database sees it now. */
export interface LeaseState {
  holder: string;
  token: number;
  acquired_at: string;
  expires_at: string;
  /** Milliseconds until it expires (negative: expired), on the database's clock. */
  remaining_ms: number;
}

/** A node of the pair, as it last said. */
export interface HaNode {
  node: string;
  role: HaRole;
  token: number | null;
  started_at: string;
  seen_at: string;
  /** Milliseconds since it last said, on the database's clock. */
  age_ms: number;
  version: string;
}

export const HA_ROLES = ['active', 'standby', 'stopped'] as const;
export type HaRole = (typeof HA_ROLES)[number];

/** A lease this node holds: its token, and how long it is valid from the moment the statement was sent. */
export interface LeaseGrant {
  token: number;
  /** Milliseconds it was valid for when the database answered (lease length, on the database's clock). */
  validMs: number;
}

const ISO = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The state's handle when its backend can hold an HA lease (dialect.haLease). */
function leaseCapable(db: StateDb): SqlDb | null {
  return db instanceof SqlDb && db.dialect.haLease ? db : null;
}

function leaseDbOf(db: StateDb): SqlDb {
  const capable = leaseCapable(db);
  if (capable === null) {
    throw new StoreError('INVALID_ARGUMENT', 'high availability needs the state in PostgreSQL: set state.backend: postgres (docs/ha.md)');
  }
  return capable;
}

export class HaLease {
  readonly #db: SqlDb;
  readonly node: string;
  readonly leaseMs: number;

  /** @throws StoreError INVALID_ARGUMENT when the state is not in PostgreSQL. */
  constructor(db: StateDb, node: string, leaseMs: number) {
    if (node.length === 0) throw new StoreError('INVALID_ARGUMENT', 'an HA node needs a name');
    this.#db = leaseDbOf(db);
    this.node = node;
    this.leaseMs = Math.trunc(leaseMs);
  }

  /** Takes the lease if it is free, expired, or this node's; null when another node holds it. */
  async tryAcquire(): Promise<LeaseGrant | null> {
    const row = await this.#db.get<{ token: number }>(
      `INSERT INTO ha_lease AS l (id, holder, token, acquired_at, expires_at)
       VALUES (1, ?, 1, now(), now() + ? * interval '1 millisecond')
       ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, token = l.token + 1, acquired_at = now(),
         expires_at = excluded.expires_at
       WHERE l.holder = excluded.holder OR l.expires_at <= now()
       RETURNING token`,
      [this.node, this.leaseMs],
    );
    return row === undefined ? null : { token: row.token, validMs: this.leaseMs };
  }

  /** Moves the expiry of the lease this node holds with `token`; null when it was lost (taken over, or expired). */
  async renew(token: number): Promise<LeaseGrant | null> {
    const changed = await this.#db.run(
      `UPDATE ha_lease SET expires_at = now() + ? * interval '1 millisecond'
       WHERE id = 1 AND holder = ? AND token = ? AND expires_at > now()`,
      [this.leaseMs, this.node, token],
    );
    return changed === 1 ? { token, validMs: this.leaseMs } : null;
  }

  /** Ends the lease this node holds (a drain): a standby takes over at its next try instead of after the lease. */
  async release(token: number): Promise<void> {
    await this.#db.run(`UPDATE ha_lease SET expires_at = now() WHERE id = 1 AND holder = ? AND token = ? AND expires_at > now()`, [
      this.node,
      token,
    ]);
  }

  /**
   * From now on, every write transaction of this handle (the agent's work) commits only while this node holds the
   * lease with `token`. Token 0 (no lease has it): nothing of the agent's work commits (a standby).
   */
  fence(token: number): void {
    const node = this.node;
    this.#db.setTransactionHooks({
      beforeWrite: async (tx) => {
        const held = await tx.value<number>(
          `SELECT 1 FROM ha_lease WHERE id = 1 AND holder = ? AND token = ? AND expires_at > now() FOR SHARE`,
          [node, token],
        );
        if (held === undefined) {
          const why = token === 0 ? 'is a standby' : `no longer holds the HA lease (token ${token})`;
          throw new StoreError('FENCED', `node ${node} ${why}: another node is active, nothing was committed`);
        }
      },
    });
  }

  /** The lease as the database sees it, or null when no node ever took it. */
  async state(): Promise<LeaseState | null> {
    const row = await this.#db.get<LeaseState>(
      `SELECT holder, token, ${ISO('acquired_at')} AS acquired_at, ${ISO('expires_at')} AS expires_at,
         (extract(epoch FROM expires_at - now()) * 1000)::bigint AS remaining_ms
       FROM ha_lease WHERE id = 1`,
    );
    return row ?? null;
  }

  /** Records this node's role (its heartbeat, at every renewal or try); `started`: the process has just started. */
  async announce(role: HaRole, token: number | null, version: string, started = false): Promise<void> {
    await this.#db.run(
      `INSERT INTO ha_nodes AS n (node, role, token, started_at, seen_at, version) VALUES (?, ?, ?, now(), now(), ?)
       ON CONFLICT (node) DO UPDATE SET role = excluded.role, token = excluded.token, seen_at = now(),
         version = excluded.version, started_at = CASE WHEN ? = 1 THEN now() ELSE n.started_at END`,
      [this.node, role, token, version, started ? 1 : 0],
    );
  }
}

/** Every node that shares the state, as each last said (for status). Empty on SQLite (no HA there). */
export async function listHaNodes(db: StateDb): Promise<HaNode[]> {
  const capable = leaseCapable(db);
  if (capable === null) return [];
  return capable.all<HaNode>(
    `SELECT node, role, token, ${ISO('started_at')} AS started_at, ${ISO('seen_at')} AS seen_at,
       (extract(epoch FROM now() - seen_at) * 1000)::bigint AS age_ms, version
     FROM ha_nodes ORDER BY node`,
  );
}

/** The lease as the database sees it (for status); null on SQLite or when no node ever took it. */
export async function haLeaseState(db: StateDb): Promise<LeaseState | null> {
  if (leaseCapable(db) === null) return null;
  return new HaLease(db, '-', 1000).state();
}
