import { describe, expect, it } from 'vitest';
import { sqlRow, sqlRows, sqlValue } from '../support/state-sql.ts';
import type { MirrorRow } from '../../src/store/mirror-tables.ts';

type Product = MirrorRow<'products'>;
type Transaction = MirrorRow<'transactions'>;
type CompetitorPrice = MirrorRow<'competitor_prices'>;
import { gridStream } from '../../src/store/mirror-tables.ts';
import {
  completeListing,
  LISTING_START_MARGIN_MS,
  listStreamStates,
  recordStreamError,
  resetStream,
  streamState,
  upsertMirrorPage,
} from '../../src/store/mirrors.ts';
import type { StateDb } from '../../src/store/state-db.ts';
import { openTestDb } from '../support/state-db.ts';
import { fixedClock, onCleanup, openTempDb, tempDir } from './support.ts';

function product(id: string, updatedAt: string, extra: Record<string, string> = {}): Product {
  return { id, item_id: `I-${id}`, sku: `S-${id}`, product_name: `Product ${id}`, updated_at: updatedAt, ...extra };
}

async function count(db: StateDb, table: string): Promise<unknown> {
  return await sqlValue(db, `SELECT count(*) FROM ${table}`);
}

describe('mirrors', () => {
  it('upserts pages by id with the cursor; completion moves the watermark to the latest updated_at', async () => {
    const clock = fixedClock();
    const db = await openTempDb({ now: clock.now });
    const first = await upsertMirrorPage(
      db,
      'products',
      [product('p1', '2026-11-20T10:00:00.5Z', { colour: 'red' }), product('p2', '2026-11-20T10:00:00Z')],
      'cursor-1',
      { listingStartedAt: '2026-11-22T09:59:59Z' },
    );
    expect(first).toMatchObject({
      cursor: 'cursor-1',
      listing_started_at: '2026-11-22T09:59:59Z',
      listing_max_updated_at: '2026-11-20T10:00:00.5Z', // an instant, not the larger string
      listing_rows: 2,
      watermark: null,
    });
    const stored = await sqlRow(db, `SELECT * FROM mirror_products WHERE id = 'p1'`) as Record<string, string>;
    expect(stored).toMatchObject({ item_id: 'I-p1', sku: 'S-p1', updated_at: '2026-11-20T10:00:00.5Z' });
    expect(JSON.parse(stored.record ?? '')).toMatchObject({ colour: 'red' }); // custom columns kept

    clock.advance(1000);
    const second = await upsertMirrorPage(db, 'products', [product('p3', '2026-11-19T00:00:00Z')], null, {
      listingStartedAt: 'ignored: not the first page',
    });
    expect(second).toMatchObject({ listing_started_at: '2026-11-22T09:59:59Z', listing_rows: 3, cursor: null });
    expect(await completeListing(db, 'products')).toMatchObject({
      watermark: '2026-11-20T10:00:00.5Z',
      cursor: null,
      listing_started_at: null,
      listing_max_updated_at: null,
      listing_rows: 0,
      last_success_at: '2026-11-22T10:00:01.000Z',
    });

    // Next run: updated_after is inclusive, so the boundary row comes again; the upsert absorbs it.
    await upsertMirrorPage(db, 'products', [product('p1', '2026-11-20T10:00:00.5Z', { colour: 'blue' })], null);
    expect(await count(db, 'mirror_products')).toBe(3);
    const again = await sqlValue(db, `SELECT record FROM mirror_products WHERE id = 'p1'`) as string;
    expect(JSON.parse(again)).toMatchObject({ colour: 'blue' });
    expect((await completeListing(db, 'products')).watermark).toBe('2026-11-20T10:00:00.5Z');
  });

  it('an interrupted listing resumes from its stored cursor after a reopen, with the old watermark', async () => {
    const dir = tempDir();
    const db = await openTestDb(dir);
    await upsertMirrorPage(db, 'transactions', [], null);
    await completeListing(db, 'transactions', { watermark: '2026-11-01T00:00:00Z' });
    const tx: Transaction = {
      transaction_id: 'T1',
      store_id: 'S1',
      timestamp: '2026-11-21T12:00:00Z',
      price: '2.50',
      updated_at: '2026-11-21T12:00:01Z',
    };
    await upsertMirrorPage(db, 'transactions', [tx], 'cursor-after-page-1');
    await db.close();

    const reopened = await openTestDb(dir);
    onCleanup(() => reopened.close());
    const state = await streamState(reopened, 'transactions');
    expect(state).toMatchObject({ cursor: 'cursor-after-page-1', watermark: '2026-11-01T00:00:00Z' });
    expect(state?.listing_started_at).not.toBeNull();
    await upsertMirrorPage(reopened, 'transactions', [{ ...tx, transaction_id: 'T2' }], null);
    expect((await completeListing(reopened, 'transactions')).watermark).toBe('2026-11-21T12:00:01Z');
    expect(await sqlRows(reopened, 'SELECT transaction_id, store_id FROM mirror_transactions')).toEqual([
      { transaction_id: 'T1', store_id: 'S1' },
      { transaction_id: 'T2', store_id: 'S1' },
    ]);
  });

  it('rows without updated_at move the watermark to the listing start; an empty listing leaves it', async () => {
    const db = await openTempDb();
    const grid = gridStream('g-1');
    const started = { listingStartedAt: '2026-11-22T08:00:00Z' };
    await upsertMirrorPage(db, grid, [{ grid_item_id: 1, price: '3.00' }], null, started);
    expect((await completeListing(db, grid)).watermark).toBe('2026-11-22T08:00:00Z');
    await upsertMirrorPage(db, grid, [], null, { listingStartedAt: '2026-11-22T09:00:00Z' });
    expect((await completeListing(db, grid)).watermark).toBe('2026-11-22T08:00:00Z');
  });

  it('the watermark never passes the listing start less a minute: a change to a row already read comes next run', async () => {
    // A server that lists by id, not by updated_at (the spec gives no order). The listing starts at 10:00:00 by
    // the server's Date; p1 is read on page 1, then changed at 10:00:10; p9, changed at 10:00:20, is on page 2.
    const db = await openTempDb();
    await upsertMirrorPage(db, 'products', [product('p1', '2026-11-22T09:00:00Z')], 'page-2', { listingStartedAt: '2026-11-22T10:00:00.000Z' });
    await upsertMirrorPage(db, 'products', [product('p9', '2026-11-22T10:00:20Z')], null);
    const done = await completeListing(db, 'products');
    // At 10:00:20 the next run's updated_after would skip p1's change at 10:00:10 for good.
    expect(done.watermark).toBe(new Date(Date.parse('2026-11-22T10:00:00Z') - LISTING_START_MARGIN_MS).toISOString());
    expect(Date.parse(done.watermark ?? '')).toBeLessThanOrEqual(Date.parse('2026-11-22T10:00:10Z'));
    // Rows all older than the listing's start less the margin: the watermark is the largest of them, as before.
    await upsertMirrorPage(db, 'products', [product('p1', '2026-11-22T10:00:10Z')], null, { listingStartedAt: '2026-11-22T11:00:00.000Z' });
    expect((await completeListing(db, 'products')).watermark).toBe('2026-11-22T10:00:10Z');
  });

  it('keys grid rows by (grid_id, grid_item_id), one stream per grid, and refuses a row without a key', async () => {
    const db = await openTempDb();
    await upsertMirrorPage(db, gridStream('g-1'), [{ grid_item_id: 7, updated_at: '2026-11-20T00:00:00Z' }], 'c');
    await upsertMirrorPage(db, gridStream('g-2'), [{ grid_item_id: '7', price: '2.00' }], null);
    await upsertMirrorPage(db, gridStream('g-1'), [{ grid_item_id: '7', price: '1.50' }], null);
    expect(await sqlRows(db, 'SELECT grid_id, grid_item_id FROM mirror_grid_rows ORDER BY grid_id')).toEqual([
      { grid_id: 'g-1', grid_item_id: 7 },
      { grid_id: 'g-2', grid_item_id: 7 },
    ]);
    expect((await listStreamStates(db)).map((s) => s.stream)).toEqual(['grid:g-1', 'grid:g-2']);

    const bad = upsertMirrorPage(db, gridStream('g-1'), [{ grid_item_id: 8 }, { price: '9.00' }], 'c2');
    await expect(bad).rejects.toThrow(expect.objectContaining({ code: 'MIRROR_KEY_MISSING' }) as Error);
    expect(await count(db, 'mirror_grid_rows')).toBe(2); // nothing of the failed page
    expect((await streamState(db, gridStream('g-1')))?.cursor).toBeNull();
  });

  it('competitor prices by integer id; errors keep the cursor; reset forgets watermark and cursor', async () => {
    const db = await openTempDb({ now: fixedClock().now });
    const price: CompetitorPrice = {
      id: 42,
      competitor_name: 'Acme',
      observed_at: '2026-11-21T00:00:00Z',
      regular_price: '4.99',
      item_id: 'I-1',
    };
    await upsertMirrorPage(db, 'competitor_prices', [price], 'c-1');
    const failed = await recordStreamError(db, 'competitor_prices', 'HTTP 503');
    expect(failed).toMatchObject({ cursor: 'c-1', last_error: 'HTTP 503' });
    await upsertMirrorPage(db, 'competitor_prices', [{ ...price, regular_price: '5.49' }], null);
    // No updated_at on these rows: the watermark is the listing's start (here the agent's clock at page 1).
    const done = await completeListing(db, 'competitor_prices');
    expect(done).toMatchObject({ last_error: null, watermark: '2026-11-22T10:00:00.000Z' });
    expect(await count(db, 'mirror_competitor_prices')).toBe(1);
    expect(await resetStream(db, 'competitor_prices')).toMatchObject({ watermark: null, cursor: null });
    await expect(streamState(db, 'nope' as 'products')).resolves.toBeUndefined();
    await expect(upsertMirrorPage(db, 'nope' as 'products', [], null)).rejects.toThrow(
      expect.objectContaining({ code: 'UNKNOWN_STREAM' }) as Error,
    );
  });
});
