/**
 * The outbox's references hold for every writer, on both backends: each feed row and each acknowledgement state
 * names a stored version, each version the delivery intent that brought it (when it has one), and a referenced row
 * is never deleted or renumbered. SQLite checks them with foreign keys; PostgreSQL, since migration 0013, with
 * triggers that check a whole statement at once. Everything here is refused by both, and the data stays as it was.
 */
import { describe, expect, it } from 'vitest';
import { storeDeliveredPage } from '../../src/store/approved-prices.ts';
import { recordDeliveryIntent } from '../../src/store/delivery-intents.ts';
import { sqlOf } from '../../src/store/sql-db.ts';
import type { StateDb } from '../../src/store/state-db.ts';
import { TEST_BACKEND } from '../support/state-db.ts';
import { approval, openTempDb } from './support.ts';

/** A refusal by a foreign key (SQLite) or by the reference checks (PostgreSQL, with the foreign key's code). */
const REFUSED = /FOREIGN KEY constraint failed|names a row that is not in|is referenced by/;

async function storedPage(): Promise<{ db: StateDb; intentId: number }> {
  const db = await openTempDb();
  const intent = await recordDeliveryIntent(db, { requestId: '11111111-1111-4111-8111-111111111111', filters: {}, cursor: null });
  await storeDeliveredPage(db, intent.id, [approval(1), approval(2)], null);
  return { db, intentId: intent.id };
}

const run = (db: StateDb, statement: string, params: (string | number | null)[] = []) =>
  sqlOf(db).write((tx) => tx.run(statement, params));

/** Every row of the four tables, to show a refused statement changed nothing. */
async function snapshot(db: StateDb): Promise<unknown[]> {
  const sql = sqlOf(db);
  return [
    await sql.all('SELECT id, intent_id FROM approved_prices ORDER BY id'),
    await sql.all('SELECT seq, approval_id FROM price_feed ORDER BY seq'),
    await sql.all('SELECT approval_id, status FROM approval_acks ORDER BY approval_id'),
    await sql.all('SELECT id, status FROM delivery_intents ORDER BY id'),
  ];
}

/** A version inserted by hand (as another writer could), with `intentId`; nothing refers to it. */
const insertVersion = (db: StateDb, id: number, intentId: number | null) =>
  run(
    db,
    `INSERT INTO approved_prices (id, grid_id, grid_item_id, proposed_price, approved_price, currency_code, proposal_source,
       source, approved_at, approved_by_user_id, export_status, record, intent_id, received_at)
     VALUES (?, '', 0, '', '10.49', 'EUR', '', '', '2026-10-30T08:00:00Z', '', '', ?, ?, '2026-11-20T10:00:00Z')`,
    [id, JSON.stringify(approval(id)), intentId],
  );

describe('references of the outbox', () => {
  it('refuses rows that name a version or an intent that does not exist, the whole statement', async () => {
    const { db, intentId } = await storedPage();
    const before = await snapshot(db);
    await expect(
      run(
        db,
        `INSERT INTO price_feed (kind, approval_id, approved_price, currency_code, recorded_at)
         VALUES ('withdrawal', 1, '1.00', 'EUR', '2026-11-20T10:00:00Z'), ('withdrawal', 99, '1.00', 'EUR', '2026-11-20T10:00:00Z')`,
      ),
    ).rejects.toThrow(REFUSED);
    await expect(run(db, `INSERT INTO approval_acks (approval_id, status) VALUES (99, 'pending')`)).rejects.toThrow(REFUSED);
    await expect(insertVersion(db, 3, intentId + 99)).rejects.toThrow(REFUSED);
    expect(await snapshot(db)).toEqual(before);
    // The same statements naming rows that exist are taken.
    await insertVersion(db, 3, intentId);
    await run(db, `INSERT INTO approval_acks (approval_id, status) VALUES (3, 'pending')`);
    expect(await sqlOf(db).value('SELECT count(*) FROM approval_acks')).toBe(3);
  });

  it('refuses changing a reference to a row that does not exist', async () => {
    const { db, intentId } = await storedPage();
    const before = await snapshot(db);
    await expect(run(db, 'UPDATE approval_acks SET approval_id = 99 WHERE approval_id = 1')).rejects.toThrow(REFUSED);
    await expect(run(db, 'UPDATE approved_prices SET intent_id = ? WHERE id = 1', [intentId + 99])).rejects.toThrow(REFUSED);
    expect(await snapshot(db)).toEqual(before);
  });

  it('keeps a referenced version or intent: no delete, no new id; an unreferenced one may go', async () => {
    const { db, intentId } = await storedPage();
    const before = await snapshot(db);
    await expect(run(db, 'DELETE FROM approved_prices WHERE id = 1')).rejects.toThrow(REFUSED);
    await expect(run(db, 'UPDATE approved_prices SET id = 100 WHERE id = 2')).rejects.toThrow(REFUSED);
    await expect(run(db, 'DELETE FROM delivery_intents WHERE id = ?', [intentId])).rejects.toThrow(REFUSED);
    expect(await snapshot(db)).toEqual(before);
    await insertVersion(db, 7, null);
    expect(await run(db, 'DELETE FROM approved_prices WHERE id = 7')).toBe(1);
    expect(await snapshot(db)).toEqual(before);
  });

  it.runIf(TEST_BACKEND === 'postgres')('refuses to truncate versions or intents (PostgreSQL)', async () => {
    const { db } = await storedPage();
    const before = await snapshot(db);
    await expect(run(db, 'TRUNCATE approved_prices CASCADE')).rejects.toThrow(/approved_prices is referenced by price_feed and approval_acks/);
    await expect(run(db, 'TRUNCATE delivery_intents CASCADE')).rejects.toThrow(/delivery_intents is referenced by approved_prices/);
    expect(await snapshot(db)).toEqual(before);
    const error = await run(db, `INSERT INTO approval_acks (approval_id, status) VALUES (99, 'pending')`).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: '23503' }); // the foreign key's code, for callers that look at it
  });
});
