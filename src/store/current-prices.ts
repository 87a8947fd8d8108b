/**
 * The prices in force on a given date: the query behind the `current_prices` view, with the date as a parameter.
 * The view uses the reading process's local date (`date('now', 'localtime')`), which tests cannot move; this
 * function runs the very same SQL text (see currentPricesSelect) with the date bound, for tests, the CLI and POS
 * integrations that need another day (e.g. tomorrow's price labels).
 */
import type { Selectable } from 'kysely';
import { currentPricesSelect } from './migrations/0002-pull-outbox.ts';
import { StoreError } from './errors.ts';
import type { CurrentPricesView } from './schema.ts';
import type { StateDb } from './state-db.ts';

export type CurrentPrice = Selectable<CurrentPricesView>;

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** One row per (item_id, store_id) with the price in force on `date` (YYYY-MM-DD), ordered by item and store key. */
export function currentPricesAt(db: StateDb, date: string): CurrentPrice[] {
  if (!ISO_DATE.test(date)) throw new StoreError('INVALID_ARGUMENT', `date must be YYYY-MM-DD, got ${date}`);
  return db
    .statement<CurrentPrice>(`SELECT * FROM (${currentPricesSelect('?')}) ORDER BY item_id, store_key`)
    .all(date);
}
