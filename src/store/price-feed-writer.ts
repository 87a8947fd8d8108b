/**
 * Appending to price_feed, the change feed POS systems read. Only the approved-price functions call this, inside
 * their page or withdrawal transaction: a feed row is committed together with the approved_prices row it describes.
 *
 * `seq` is allocated inside the write transaction and SQLite has one writer at a time, so seq order is commit
 * order: a reader that has seen seq N will never later find a committed row below N. At most one row per
 * (approval_id, kind): the UNIQUE constraint refuses a second one; callers check first, because an ignored insert
 * would still consume a seq and leave a gap.
 */
import type { ApprovedPrice } from '../api/schemas/index.ts';
import type { FeedKind } from './schema.ts';
import type { StateDb } from './state-db.ts';

/** The fields of an approved-price version that a feed row carries. */
export type FeedSource = Pick<
  ApprovedPrice,
  'id' | 'predecessor_id' | 'item_id' | 'sku' | 'store_id' | 'approved_price' | 'currency_code' | 'effective_date'
>;

/** Appends one row and returns its seq. */
export function appendFeedRow(db: StateDb, kind: FeedKind, source: FeedSource): number {
  const result = db
    .statement(
      `INSERT INTO price_feed (kind, approval_id, predecessor_id, item_id, sku, store_id, approved_price,
         currency_code, effective_date, recorded_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      kind,
      source.id,
      source.predecessor_id ?? null,
      source.item_id,
      source.sku,
      source.store_id,
      source.approved_price,
      source.currency_code,
      source.effective_date,
      db.now(),
    );
  return Number(result.lastInsertRowid);
}

export function hasFeedRow(db: StateDb, approvalId: number, kind: FeedKind): boolean {
  return (
    db.statement('SELECT 1 FROM price_feed WHERE approval_id = ? AND kind = ?').pluck().get(approvalId, kind) !==
    undefined
  );
}
