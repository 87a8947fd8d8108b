/**
 * Issue 27 point 8: a POS reader's database role against the other consumers' offsets and the stores' confirmations.
 * The agent runs as the document's own role (the owner of its schema, not a superuser); the readers' roles are made
 * with docs/postgresql.md's statements. Logged in as one POS, the attacker tries to rewind, skip, claim, delete and
 * truncate the offsets of the feed API's till and of another POS, and to change the confirmations, first with the
 * documented grants and then after a DBA granted ALL on both tables: every try is refused or changes no row. The
 * documented way (a POS records its own offset; middleware records the consumers whose roles it was granted) still
 * works, and so does the agent. The postgres project only (it needs a cluster).
 */
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openStateDb } from '../../src/store/open-state-db.ts';
import { listApplied, recordApplied } from '../../src/store/feed-consumers.ts';
import { ackConsumer, listConsumers } from '../../src/store/price-feed.ts';
import { approval, deliver, STORE_A, STORE_B } from '../outbox/support.ts';
import { onCleanup, pgClient, tempDir } from '../store/support.ts';
import { readerSectionBlocks } from '../support/postgresql-doc.ts';
import { TEST_BACKEND, testStateConfig } from '../support/state-db.ts';

function client(url: string, user: string): Promise<pg.Client> {
  return pgClient(url.replace('postgres@', `${encodeURIComponent(user)}@`));
}

/** The feed API's till and another POS: the rows the attacker must not reach. */
const TILL = 'till-a';
const OTHER_POS = 'pos-store-0043';

describe.runIf(TEST_BACKEND === 'postgres')("a POS reader's role against other consumers' offsets and confirmations", () => {
  it('is refused every change to rows not its own, whatever it is granted; its own offset works as documented', async () => {
    const config = await testStateConfig(tempDir());
    const postgres = config.postgres;
    if (postgres === null) throw new Error('no PostgreSQL test config');
    const dba = await client(postgres.url, 'postgres');
    // Section 1 of the document: the agent's role owns its schema and nothing else.
    await dba.query(`CREATE ROLE pricing_agent LOGIN`);
    await dba.query(`CREATE SCHEMA pricing_agent AUTHORIZATION pricing_agent`);
    const db = await openStateDb({ ...config, postgres: { ...postgres, url: postgres.url.replace('postgres@', 'pricing_agent@'), schema: 'pricing_agent' } });
    onCleanup(() => db.close());
    await deliver(db, [
      approval(1, { store_id: STORE_A }),
      approval(2, { store_id: null }),
      approval(3, { store_id: STORE_B }),
      approval(4, { store_id: STORE_A }),
    ]);
    // The till's offset and its store's confirmation, as the feed API records them.
    await ackConsumer(db, TILL, 2);
    await recordApplied(db, TILL, STORE_A, 1, '2026-11-22T09:00:00Z');

    const [roleStatements, queries] = readerSectionBlocks();
    for (const statement of roleStatements ?? []) await dba.query(statement);
    const upsert = queries?.find((q) => q.startsWith('INSERT INTO consumer_offsets')) ?? '';
    expect(upsert).toContain('ON CONFLICT (consumer) DO UPDATE');
    // Another POS, made as the document makes one, records its own offset.
    await dba.query(`CREATE ROLE "${OTHER_POS}" LOGIN IN ROLE pos_readers`);
    await dba.query(`ALTER ROLE "${OTHER_POS}" SET search_path = pricing_agent`);
    await (await client(postgres.url, OTHER_POS)).query(upsert, [OTHER_POS, 3]);

    const before = { offsets: await listConsumers(db), applied: await listApplied(db) };
    expect(before.offsets.map((o) => [o.consumer, o.last_seq])).toEqual([
      [TILL, 2],
      [OTHER_POS, 3],
    ]);
    const attacker = await client(postgres.url, 'pos-store-0042');

    /** Each try either fails with `refused` or changes no row. */
    const attack = async (refused: RegExp | null, statement: string, params: unknown[] = []): Promise<void> => {
      if (refused === null) expect((await attacker.query(statement, params)).rowCount, statement).toBe(0);
      else await expect(attacker.query(statement, params), statement).rejects.toThrow(refused);
    };
    const tries = async (granted: 'documented' | 'all'): Promise<void> => {
      const denied = /permission denied|only the agent's role may truncate/;
      const rls = /row-level security/;
      // Offsets: rewind or skip them all, one, through the documented statement; claim a till that has not read yet.
      await attack(null, `UPDATE consumer_offsets SET last_seq = 0`);
      await attack(null, `UPDATE consumer_offsets SET last_seq = 4 WHERE consumer = $1`, [TILL]);
      await attack(rls, upsert, [TILL, 4]);
      await attack(rls, upsert, [OTHER_POS, 4]);
      await attack(rls, `INSERT INTO consumer_offsets (consumer, last_seq, updated_at) VALUES ('till-b', 4, 'x')`);
      await attack(granted === 'all' ? null : denied, `DELETE FROM consumer_offsets WHERE consumer = $1`, [TILL]);
      await attack(denied, `TRUNCATE consumer_offsets`);
      // Confirmations: the agent's to write alone.
      await attack(granted === 'all' ? null : denied, `UPDATE feed_applied SET applied_seq = 4`);
      await attack(granted === 'all' ? null : denied, `DELETE FROM feed_applied`);
      await attack(granted === 'all' ? rls : denied, `INSERT INTO feed_applied (consumer, store_id, applied_seq, confirmed_at) VALUES ($1, $2, 4, 'x')`, [TILL, STORE_B]);
      await attack(denied, `TRUNCATE feed_applied`);
      expect({ offsets: await listConsumers(db), applied: await listApplied(db) }, granted).toEqual(before);
    };
    await tries('documented');
    // A DBA who grants more than the document says (ALL, TRUNCATE included) opens nothing more.
    await dba.query(`GRANT ALL ON pricing_agent.consumer_offsets, pricing_agent.feed_applied TO pos_readers`);
    await tries('all');

    // The documented way: the POS records its own offset (never backwards) and reads its lag.
    await attacker.query(upsert, ['pos-store-0042', 3]);
    await attacker.query(upsert, ['pos-store-0042', 1]);
    expect((await attacker.query(`SELECT last_seq FROM consumer_offsets WHERE consumer = $1`, ['pos-store-0042'])).rows).toEqual([{ last_seq: '3' }]);
    // Middleware records the consumers whose roles it was granted, and only those.
    await dba.query(`CREATE ROLE middleware LOGIN IN ROLE pos_readers`);
    await dba.query(`ALTER ROLE middleware SET search_path = pricing_agent`);
    await dba.query(`CREATE ROLE "pos-store-0044" NOLOGIN`);
    await dba.query(`GRANT "pos-store-0044" TO middleware`);
    const middleware = await client(postgres.url, 'middleware');
    await middleware.query(upsert, ['pos-store-0044', 2]);
    await expect(middleware.query(upsert, [TILL, 4])).rejects.toThrow(/row-level security/);

    // The agent, owner of its tables but no superuser, writes offsets and confirmations as before.
    await ackConsumer(db, TILL, 4);
    await ackConsumer(db, OTHER_POS, 1, { force: true });
    await recordApplied(db, TILL, STORE_A, 4, null);
    expect((await listConsumers(db)).map((o) => [o.consumer, o.last_seq])).toEqual([
      [OTHER_POS, 1],
      ['pos-store-0044', 2],
      ['pos-store-0042', 3],
      [TILL, 4],
    ]);
    expect((await listApplied(db)).map((a) => [a.consumer, a.store_id, a.applied_seq])).toEqual([[TILL, STORE_A, 4]]);
  });
});
