/**
 * Section 4 of docs/postgresql.md runs as written against a real PostgreSQL outbox: the readers' roles are created
 * with the document's statements, and the POS's login role polls the feed, records its offset (never backwards, never
 * beyond the feed), reads its lag and the prices in force at its store, and can change nothing else (what it tries on
 * other consumers' rows: test/abuse/postgres-reader-role.test.ts). Statements are taken
 * from the section's ```sql blocks, in order; adding one means adding its parameters here. The postgres project only.
 */
import { describe, expect, it } from 'vitest';
import { openStateDb } from '../../src/store/open-state-db.ts';
import { onCleanup, pgClient, tempDir } from '../store/support.ts';
import { readerSectionBlocks } from '../support/postgresql-doc.ts';
import { TEST_BACKEND, testStateConfig } from '../support/state-db.ts';
import { STORE_A, STORE_B, approval, deliver } from './support.ts';

describe.runIf(TEST_BACKEND === 'postgres')('docs/postgresql.md: POS systems reading the outbox', () => {
  it('the read-only role and every query work as written; the role changes nothing but its offset', async () => {
    const config = await testStateConfig(tempDir());
    const postgres = config.postgres;
    if (postgres === null) throw new Error('no PostgreSQL test config');
    // The schema the document names, as a DBA following it would have.
    const db = await openStateDb({ ...config, postgres: { ...postgres, schema: 'pricing_agent' } });
    onCleanup(() => db.close());
    await deliver(db, [
      approval(1, { item_id: 'A', store_id: STORE_A, approved_price: '1.00' }),
      approval(2, { item_id: 'A', store_id: null, approved_price: '0.90' }),
      approval(3, { item_id: 'B', store_id: null, approved_price: '2.00' }),
      approval(4, { item_id: 'C', store_id: STORE_B, approved_price: '3.00' }),
    ]);
    const [roleStatements, queries] = readerSectionBlocks();
    expect(roleStatements?.[0]).toMatch(/^CREATE ROLE pos_readers NOLOGIN/);
    const admin = await pgClient(postgres.url);
    for (const statement of roleStatements ?? []) await admin.query(statement);

    // The POS logs in as the role the document creates for it, named as its consumer.
    const pos = /CREATE ROLE "([^"]+)" LOGIN/.exec((roleStatements ?? []).join('\n'))?.[1] ?? '';
    expect(pos).toBe('pos-store-0042');
    const reader = await pgClient(postgres.url.replace('postgres@', `${pos}@`));
    const params: unknown[][] = [
      [0], // poll
      [0, STORE_A], // only your store and product-level rows
      [pos, 3], // record the offset
      [pos], // lag
      [STORE_A], // prices at one store
    ];
    expect(queries).toHaveLength(params.length);
    const results: Record<string, unknown>[][] = [];
    for (const [i, text] of (queries ?? []).entries()) results.push((await reader.query(text, params[i])).rows as Record<string, unknown>[]);
    expect(results[0]?.map((r) => Number(r['seq']))).toEqual([1, 2, 3, 4]);
    expect(results[1]?.map((r) => Number(r['seq']))).toEqual([1, 2, 3]);
    expect(results[3]?.map((r) => Number(r['lag']))).toEqual([1]);
    const atStore = [...(results[4] ?? [])].sort((x, y) => String(x['item_id']).localeCompare(String(y['item_id'])));
    expect(atStore.map((r) => [r['item_id'], r['approved_price']])).toEqual([
      ['A', '1.00'],
      ['B', '2.00'],
    ]);

    // The offset never moves backwards, and never beyond the feed's end.
    const upsert = queries?.[2] ?? '';
    await reader.query(upsert, [pos, 1]);
    expect((await reader.query(`SELECT last_seq FROM consumer_offsets WHERE consumer = $1`, [pos])).rows).toEqual([{ last_seq: '3' }]);
    await expect(reader.query(upsert, [pos, 99])).rejects.toThrow(/beyond the last seq/);

    // Nothing else is the reader's to change.
    for (const statement of [
      `INSERT INTO price_feed (kind, approval_id, recorded_at) VALUES ('price', 1, 'x')`,
      `UPDATE approved_prices SET approved_price = '0'`,
      `DELETE FROM consumer_offsets`,
      `UPDATE agent_meta SET value = 'x'`,
      `SELECT * FROM push_files`,
    ]) {
      await expect(reader.query(statement), statement).rejects.toThrow(/permission denied/);
    }
  });
});
