/**
 * The HA lease (src/store/ha-lease.ts) on a real PostgreSQL state shared by two handles, as two nodes have it: one
 * active at a time, a takeover only after expiry (or a release) and with a new token, and fencing: a node whose lease
 * ended commits nothing, even a transaction it had begun before the takeover. Expiry is made by moving expires_at in
 * the database (the lease runs on the database's clock), never by waiting. The postgres project only.
 */
import { describe, expect, it } from 'vitest';
import { HaLease, haLeaseState, listHaNodes } from '../../src/store/ha-lease.ts';
import { openStateDb } from '../../src/store/open-state-db.ts';
import { recordApplied, recordLastSeen } from '../../src/store/feed-consumers.ts';
import { advanceConsumer } from '../../src/store/price-feed.ts';
import { sqlOf } from '../../src/store/sql-db.ts';
import type { StateDb } from '../../src/store/state-db.ts';
import { sqlRun, sqlValue } from '../support/state-sql.ts';
import { TEST_BACKEND, testStateConfig } from '../support/state-db.ts';
import { approval, deliver } from '../outbox/support.ts';
import { onCleanup, tempDir } from './support.ts';

const LEASE_MS = 10_000;

/** Two handles on one PostgreSQL state, as two nodes of a pair. */
async function pair(options: { idleInTransactionTimeoutMs?: number } = {}): Promise<{ a: StateDb; b: StateDb; admin: StateDb }> {
  const config = await testStateConfig(tempDir());
  const open = async () => {
    const db = await openStateDb(config, options);
    onCleanup(() => db.close());
    return db;
  };
  return { a: await open(), b: await open(), admin: await open() };
}

/** The lease ends now (as after lease_s without a renewal). */
async function expire(admin: StateDb): Promise<void> {
  await sqlRun(admin, `UPDATE ha_lease SET expires_at = now() - interval '1 millisecond'`);
}

const fenced = expect.objectContaining({ code: 'FENCED' }) as Error;

describe.runIf(TEST_BACKEND === 'postgres')('the HA lease', () => {
  it('one active at a time; a takeover only after expiry, with the next token; the old holder commits nothing', async () => {
    const { a, b, admin } = await pair();
    const [leaseA, leaseB] = [new HaLease(a, 'node-a', LEASE_MS), new HaLease(b, 'node-b', LEASE_MS)];
    const grantA = await leaseA.tryAcquire();
    expect(grantA).toEqual({ token: 1, validMs: LEASE_MS });
    expect(await leaseB.tryAcquire()).toBeNull();
    expect(await leaseA.renew(1)).toEqual({ token: 1, validMs: LEASE_MS });
    leaseA.fence(1);
    await deliver(a, [approval(1)]); // the active commits
    expect(await haLeaseState(admin)).toMatchObject({ holder: 'node-a', token: 1 });
    expect((await haLeaseState(admin))?.remaining_ms).toBeGreaterThan(LEASE_MS - 5_000);

    await expire(admin);
    await expect(deliver(a, [approval(2)])).rejects.toThrow(fenced); // expired: refused before anyone took over
    expect(await leaseA.renew(1)).toBeNull();
    expect(await leaseB.tryAcquire()).toEqual({ token: 2, validMs: LEASE_MS });
    leaseB.fence(2);
    await deliver(b, [approval(3)]);
    await expect(deliver(a, [approval(2)])).rejects.toThrow(fenced);
    expect(await leaseA.tryAcquire()).toBeNull(); // B holds it now
    expect(await sqlValue(admin, 'SELECT count(*) FROM price_feed')).toBe(2); // approvals 1 and 3, never 2
    // A feed consumer's own bookkeeping is not the agent's work: any node stores it (docs/ha.md), a fenced one too.
    expect(await advanceConsumer(a, 'pos-1', 1)).toMatchObject({ last_seq: 1 });
    expect(await recordApplied(a, 'pos-1', 'S1', 1, null)).toEqual({ applied_seq: 1, moved: true });
    await recordLastSeen(a, new Map([['pos-1', '2026-11-24T10:00:00.000Z']]));
    expect(await advanceConsumer(b, 'pos-1', 0)).toMatchObject({ last_seq: 1 }); // never moved back

    // A drain releases the lease: the other node takes it at once, with a new token.
    await leaseB.release(2);
    await expect(deliver(b, [approval(4)])).rejects.toThrow(fenced);
    expect(await leaseA.tryAcquire()).toEqual({ token: 3, validMs: LEASE_MS });
    // A node that restarts while it still holds the lease takes it again with a new token: nothing of its previous
    // process commits with the old one.
    expect(await leaseA.tryAcquire()).toEqual({ token: 4, validMs: LEASE_MS });
    leaseA.fence(3);
    await expect(deliver(a, [approval(5)])).rejects.toThrow(fenced);
    leaseA.fence(4);
    await deliver(a, [approval(5)]);
  });

  it('a holder frozen inside a transaction holds the takeover back only until PostgreSQL ends its session; its commit fails', async () => {
    const { a, b, admin } = await pair({ idleInTransactionTimeoutMs: 1_000 });
    const [leaseA, leaseB] = [new HaLease(a, 'node-a', LEASE_MS), new HaLease(b, 'node-b', LEASE_MS)];
    expect(await leaseA.tryAcquire()).toMatchObject({ token: 1 });
    leaseA.fence(1);
    // A's transaction checked the lease (FOR SHARE), then A froze (SIGSTOP, a long GC) before committing.
    const { promise: frozen, resolve: thaw } = Promise.withResolvers<void>();
    const { promise: fenceChecked, resolve: checked } = Promise.withResolvers<void>();
    const commit = sqlOf(a).write(async (tx) => {
      checked();
      await frozen;
      await tx.run(`INSERT INTO agent_meta (key, value) VALUES ('frozen', 'committed')`);
    });
    commit.catch(() => undefined);
    await fenceChecked;
    await expire(admin).catch(() => undefined); // waits on A's share lock too; PostgreSQL ends A's session first
    const takeover = leaseB.tryAcquire();
    expect(await takeover).toMatchObject({ token: 2 }); // after A's session was ended, not after A woke up
    thaw();
    await expect(commit).rejects.toThrow();
    expect(await sqlValue(admin, `SELECT count(*) FROM agent_meta WHERE key = 'frozen'`)).toBe(0);
  });

  it("two nodes writing one consumer's offset and confirmation at once never move them back", async () => {
    const { a, b, admin } = await pair();
    await deliver(admin, [approval(1), approval(2), approval(3)]);
    await advanceConsumer(admin, 'pos-1', 1);
    await recordApplied(admin, 'pos-1', 'S1', 1, null);
    // B's request moved them to 3 and has not committed yet when A's request, moving them to 2, writes.
    const { promise: held, resolve: commitB } = Promise.withResolvers<void>();
    const { promise: wroteB, resolve: written } = Promise.withResolvers<void>();
    const writeB = sqlOf(b).write(async (tx) => {
      await tx.run(`UPDATE consumer_offsets SET last_seq = 3 WHERE consumer = 'pos-1'`);
      await tx.run(`UPDATE feed_applied SET applied_seq = 3 WHERE consumer = 'pos-1'`);
      written();
      await held;
    });
    await wroteB;
    const offsetA = advanceConsumer(a, 'pos-1', 2);
    const appliedA = recordApplied(a, 'pos-1', 'S1', 2, null);
    const waiting = `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`;
    for (let i = 0; i < 400 && ((await sqlValue<number>(admin, waiting)) ?? 0) < 2; i += 1) await new Promise((r) => setTimeout(r, 10));
    expect(await sqlValue<number>(admin, waiting)).toBe(2); // both of A's writes wait for B's row locks
    commitB();
    await writeB;
    expect(await offsetA).toMatchObject({ last_seq: 3 });
    expect(await appliedA).toEqual({ applied_seq: 3, moved: false });
    expect(await sqlValue(admin, `SELECT last_seq FROM consumer_offsets WHERE consumer = 'pos-1'`)).toBe(3);
    expect(await sqlValue(admin, `SELECT applied_seq FROM feed_applied WHERE consumer = 'pos-1'`)).toBe(3);
  });

  it('status sees each node and its role', async () => {
    const { a, b, admin } = await pair();
    const [leaseA, leaseB] = [new HaLease(a, 'node-a', LEASE_MS), new HaLease(b, 'node-b', LEASE_MS)];
    await leaseA.announce('active', 1, '1.2.3', true);
    await leaseB.announce('standby', null, '1.2.3', true);
    await leaseB.announce('standby', null, '1.2.4');
    expect(await listHaNodes(admin)).toEqual([
      expect.objectContaining({ node: 'node-a', role: 'active', token: 1, version: '1.2.3' }),
      expect.objectContaining({ node: 'node-b', role: 'standby', token: null, version: '1.2.4' }),
    ]);
  });
});
