/**
 * Every SQL example in docs/outbox.md runs as written against a real outbox and gives what the text promises.
 * Statements are taken from the document's ```sql blocks, in order; adding one means adding its parameters here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sqlValue } from '../support/state-sql.ts';
import { openTempSqlite as openTempDb } from '../store/support.ts';
import { STORE_A, STORE_B, approval, deliver } from './support.ts';

function docStatements(): string[] {
  const doc = readFileSync(new URL('../../docs/outbox.md', import.meta.url), 'utf8');
  const blocks = [...doc.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
  return blocks
    .flatMap((block) => block.split(/;\s*(?:--[^\n]*)?\n/))
    .map((s) => s.replace(/^\s*--[^\n]*\n/gm, '').trim())
    .filter((s) => s.length > 0);
}

describe('docs/outbox.md', () => {
  it('every SQL example works as written', async () => {
    const db = await openTempDb();
    await deliver(db, [
      approval(1, { item_id: 'A', store_id: STORE_A, approved_price: '1.00' }),
      approval(2, { item_id: 'A', store_id: null, approved_price: '0.90' }),
      approval(3, { item_id: 'B', store_id: null, approved_price: '2.00' }),
      approval(4, { item_id: 'C', store_id: STORE_B, approved_price: '3.00' }),
    ]);
    const statements = docStatements();
    const params: unknown[] = [
      [0], // poll
      [0, STORE_A], // only your store and product-level rows
      [], // BEGIN IMMEDIATE
      { consumer: 'pos-a', seq: 3 }, // record the offset
      [], // COMMIT
      { consumer: 'pos-a' }, // lag
      { store_id: STORE_A }, // prices at one store
      ['A', STORE_A], // one item
    ];
    expect(statements).toHaveLength(params.length);
    const results = statements.map((sql, i) => {
      const stmt = db.sqlite.prepare(sql);
      const p = params[i];
      const args: unknown[] = Array.isArray(p) ? (p as unknown[]) : [p];
      return stmt.reader ? stmt.all(...args) : stmt.run(...args);
    });
    expect((results[0] as unknown[]).length).toBe(4);
    expect((results[1] as { seq: number }[]).map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(results[5]).toEqual([{ lag: 1 }]);
    const atStore = [...(results[6] as { item_id: string }[])].sort((x, y) => x.item_id.localeCompare(y.item_id));
    expect(atStore).toEqual([
      expect.objectContaining({ item_id: 'A', approved_price: '1.00' }),
      expect.objectContaining({ item_id: 'B', approved_price: '2.00' }),
    ]);
    expect(results[7]).toEqual([{ approved_price: '1.00', currency_code: 'EUR' }]);

    // The offset upsert never moves backwards.
    const [begin, upsert, commit] = statements.slice(2, 5).map((s) => db.sqlite.prepare(s));
    begin?.run();
    upsert?.run({ consumer: 'pos-a', seq: 1 });
    commit?.run();
    expect(await sqlValue(db, `SELECT last_seq FROM consumer_offsets WHERE consumer = 'pos-a'`)).toBe(3);
  });
});
