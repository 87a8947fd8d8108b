/**
 * A store's snapshot (the feed's `/current`) is read in pages by item, each a separate short read, and stays
 * consistent without one transaction: its seq is read first, so a change committed between two pages reaches a till
 * through the snapshot and the feed after that seq, whichever page it lands beside (store-snapshot.ts). Runs on both
 * backends (their text collations order item ids differently; each pages in its own order).
 */
import { describe, expect, it } from 'vitest';
import type { ApprovedPrice } from '../../src/api/schemas/index.ts';
import { type CurrentPrice, currentPricesAt } from '../../src/store/approved-prices.ts';
import { maxSeq, readScopedFeed } from '../../src/store/price-feed.ts';
import { openStoreSnapshot, SNAPSHOT_PAGE_VERSIONS } from '../../src/store/store-snapshot.ts';
import type { StateDb } from '../../src/store/state-db.ts';
import { approval, deliver, openTempDb } from '../outbox/support.ts';

const STORE = 'aaaaaaaa-0000-4000-8000-000000000001';
const OTHER = 'bbbbbbbb-0000-4000-8000-000000000002';
const TODAY = '2026-11-22';
const PAGE = 4;

let nextId = 1;
function version(item: string, store: string | null, overrides: Partial<ApprovedPrice> = {}): ApprovedPrice {
  const id = nextId++;
  return approval(id, { item_id: item, sku: `SKU-${item}`, store_id: store, approved_price: `${id}.00`, ...overrides });
}

/** Versions `seed` stores. */
const VERSIONS = 20 * 2 + 6 + 1;

/** 20 items: each with a price for STORE and for OTHER, every third one with a product-level price too. */
async function seed(db: StateDb): Promise<ApprovedPrice[]> {
  const items: ApprovedPrice[] = [];
  for (let i = 1; i <= 20; i += 1) {
    const item = `I-${String(i).padStart(2, '0')}`;
    items.push(version(item, STORE), version(item, OTHER));
    if (i % 3 === 0) items.push(version(item, null));
  }
  items.push(version('I-05', STORE, { effective_date: '2026-12-01', approved_at: '2026-11-20T08:00:00Z' })); // upcoming
  await deliver(db, items);
  return items;
}

/** The pages of `pages`; `between` runs after each, with the pages read so far, before the next is read. */
async function collect(pages: AsyncGenerator<CurrentPrice[]>, between?: (read: CurrentPrice[][]) => Promise<void>): Promise<CurrentPrice[][]> {
  const out: CurrentPrice[][] = [];
  for await (const page of pages) {
    out.push(page);
    await between?.(out);
  }
  return out;
}

/** One key's price: the store's own or the product-level one. */
const keyOf = (p: CurrentPrice) => `${p.item_id}|${p.store_key}`;
const dateOf = (p: CurrentPrice) => p.effective_date || p.approved_at.slice(0, 10);
/** Which of two prices of a key is in force: the later date, then the later approval, then the larger id (migration 0002). */
const later = (a: CurrentPrice, b: CurrentPrice) =>
  dateOf(a) !== dateOf(b) ? dateOf(a) > dateOf(b) : a.approved_at !== b.approved_at ? a.approved_at > b.approved_at : a.approval_id > b.approval_id;

/**
 * What a till holds after applying `snapshot` and then the feed after its seq, by the rules of docs/feed.md: a version
 * by its approval_id, an amendment replaces its predecessor, a withdrawal removes its version, each applied
 * idempotently. Returns the versions in force on TODAY (the latest per key) and those to come, as approval ids.
 */
async function tillAfter(db: StateDb, seq: number, current: CurrentPrice[], upcoming: CurrentPrice[]): Promise<{ current: number[]; upcoming: number[] }> {
  const held = new Map<number, CurrentPrice>();
  for (const p of [...current, ...upcoming]) held.set(p.approval_id, p);
  for (const row of await readScopedFeed(db, [STORE], seq, 10_000)) {
    if (row.kind === 'withdrawal') held.delete(row.approval_id);
    else {
      if (row.predecessor_id !== null) held.delete(row.predecessor_id);
      held.set(row.approval_id, {
        item_id: row.item_id ?? '', store_id: row.store_id, store_key: row.store_id ?? '_all', sku: row.sku, approved_price: row.approved_price,
        currency_code: row.currency_code, effective_date: row.effective_date ?? '', approval_id: row.approval_id, predecessor_id: row.predecessor_id,
        approved_at: '2026-11-21T08:00:00Z', // every change below is approved after the seeded versions
      });
    }
  }
  const winners = new Map<string, CurrentPrice>();
  const toCome: number[] = [];
  for (const p of held.values()) {
    if (dateOf(p) > TODAY) toCome.push(p.approval_id);
    else {
      const best = winners.get(keyOf(p));
      if (best === undefined || later(p, best)) winners.set(keyOf(p), p);
    }
  }
  return { current: [...winners.values()].map((p) => p.approval_id).sort((a, b) => a - b), upcoming: toCome.sort((a, b) => a - b) };
}

describe('a store snapshot read in pages', () => {
  it('gives what one read gives, in pages of a bounded number of versions', async () => {
    const db = await openTempDb();
    await seed(db);
    const snapshot = await openStoreSnapshot(db, STORE, TODAY, { pageVersions: PAGE });
    const pages = await collect(snapshot.current());
    const whole = (await currentPricesAt(db, TODAY)).filter((p) => p.store_id === STORE || p.store_id === null);
    expect(pages.flat()).toEqual(whole);
    // A page spans PAGE versions of any store, plus the rest of its last item's (at most 3 more here); a store has at
    // most 2 prices an item (its own and the product-level one).
    expect(pages.length).toBeGreaterThanOrEqual(Math.ceil(VERSIONS / (PAGE + 3)));
    for (const page of pages) expect(page.length).toBeLessThanOrEqual(PAGE + 1);
    const upcoming = (await collect(snapshot.upcoming())).flat();
    expect(upcoming.map((p) => [p.item_id, p.effective_date])).toEqual([['I-05', '2026-12-01']]);
  });

  it('stops reading when its reader stops', async () => {
    const db = await openTempDb();
    await seed(db);
    const snapshot = await openStoreSnapshot(db, STORE, TODAY, { pageVersions: PAGE });
    for await (const page of snapshot.current()) {
      expect(page.length).toBeGreaterThan(0);
      break; // the generator is returned: nothing is left open (a write goes through at once, on SQLite too)
    }
    await deliver(db, [version('I-99', STORE)]);
  });

  it('refuses a page size beyond the bound', async () => {
    const db = await openTempDb();
    await expect(openStoreSnapshot(db, STORE, TODAY, { pageVersions: SNAPSHOT_PAGE_VERSIONS + 1 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(openStoreSnapshot(db, STORE, '22.11.2026')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('changes committed between two pages reach the till through the snapshot and the feed after its seq', async () => {
    const db = await openTempDb();
    const seeded = await seed(db);
    const own = (item: string) => seeded.find((v) => v.item_id === item && v.store_id === STORE) as ApprovedPrice;
    const snapshot = await openStoreSnapshot(db, STORE, TODAY, { pageVersions: PAGE });
    let pagedBefore: (string | null)[] | null = null;
    const changed = { approved_at: '2026-11-21T08:00:00Z' };
    const current = (
      await collect(snapshot.current(), async (read) => {
        const items = read.flat().map((p) => p.item_id);
        if (pagedBefore !== null || !items.includes('I-04')) return;
        pagedBefore = items;
        // Between two pages: changes to items already paged, to items not paged yet, new items on both sides.
        await deliver(db, [
          version('I-01', STORE, { ...changed, predecessor_id: own('I-01').id }), // amends a paged price
          version('I-15', STORE, { ...changed, predecessor_id: own('I-15').id }), // amends a price not paged yet
          version('I-00', STORE, changed), // a new item before the pages read
          version('I-30', STORE, changed), // a new item after them
          version('I-02', STORE, { ...changed, effective_date: '2026-12-24' }), // upcoming for a paged item
        ]);
        await deliver(db, [
          { ...own('I-04'), cancelled_at: '2026-11-21T09:00:00Z' }, // withdraws a paged price
          { ...own('I-17'), cancelled_at: '2026-11-21T09:00:00Z' }, // withdraws a price not paged yet
        ]);
      })
    ).flat();
    // I-01 and I-04 were paged before their changes (only the feed has those), I-15 and I-17 after (the feed brings
    // their changes again).
    expect(pagedBefore).toEqual(expect.arrayContaining(['I-01', 'I-04']));
    expect(pagedBefore).not.toContain('I-15');
    expect(pagedBefore).not.toContain('I-17');
    const upcoming = (await collect(snapshot.upcoming())).flat();

    const seqAfterPages = await maxSeq(db);
    const till = await tillAfter(db, snapshot.seq, current, upcoming);
    const truth = await openStoreSnapshot(db, STORE, TODAY); // read again with nothing in between
    const truthCurrent = (await collect(truth.current())).flat();
    const truthUpcoming = (await collect(truth.upcoming())).flat();
    expect(truthCurrent).toEqual((await currentPricesAt(db, TODAY)).filter((p) => p.store_id === STORE || p.store_id === null));
    expect(till).toEqual({
      current: truthCurrent.map((p) => p.approval_id).sort((a, b) => a - b),
      upcoming: truthUpcoming.map((p) => p.approval_id).sort((a, b) => a - b),
    });
    // Had the seq been read after the pages, the changes to the items paged before them would be lost.
    expect(await tillAfter(db, seqAfterPages, current, upcoming)).not.toEqual(till);
    expect(truthCurrent.map((p) => p.item_id)).toEqual(expect.arrayContaining(['I-00', 'I-30']));
    expect(truthCurrent.map((p) => keyOf(p))).not.toContain(`I-04|${STORE}`);
    expect(truthCurrent.map((p) => keyOf(p))).not.toContain(`I-17|${STORE}`);
  });
});
