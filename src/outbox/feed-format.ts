/**
 * Feed rows as text, for everything that hands them to a POS outside the database: the per-store files
 * (store-files.ts) and the feed API (src/feed/). One home, so a file and an HTTP answer never disagree on a column.
 *
 * Columns are the feed's, in this order, and never renamed (POS importers map them by name). CSV: a header line,
 * `,` separated, the agent's one quoting rule (src/csv-text.ts: RFC 4180, CRLF), an empty field is NULL. JSON Lines: one object per line with the same keys, NULL as null. Prices stay the decimal strings the API
 * sent.
 */
import { csvLine } from '../csv-text.ts';
import type { FeedRow } from '../store/price-feed.ts';

export const FEED_COLUMNS = [
  'seq',
  'kind',
  'approval_id',
  'predecessor_id',
  'item_id',
  'sku',
  'store_id',
  'approved_price',
  'currency_code',
  'effective_date',
  'recorded_at',
] as const satisfies readonly (keyof FeedRow)[];

export type FeedRowFormat = 'csv' | 'jsonl';

/** A row with exactly the feed's columns, in order (whatever else a query selected). */
export function feedRecord(row: FeedRow): Record<(typeof FEED_COLUMNS)[number], string | number | null> {
  return {
    seq: row.seq,
    kind: row.kind,
    approval_id: row.approval_id,
    predecessor_id: row.predecessor_id,
    item_id: row.item_id,
    sku: row.sku,
    store_id: row.store_id,
    approved_price: row.approved_price,
    currency_code: row.currency_code,
    effective_date: row.effective_date,
    recorded_at: row.recorded_at,
  };
}

/** The text before the first row: the CSV header line; nothing for JSON Lines. */
export function feedHeader(format: FeedRowFormat): string {
  return format === 'csv' ? `${FEED_COLUMNS.join(',')}\r\n` : '';
}

/** The rows, one line each. */
export function formatFeedRows(format: FeedRowFormat, rows: readonly FeedRow[]): string {
  let out = '';
  for (const row of rows) out += formatFeedRow(format, row);
  return out;
}

/** One row as its line. */
export function formatFeedRow(format: FeedRowFormat, row: FeedRow): string {
  return format === 'csv' ? csvLine(FEED_COLUMNS.map((c) => cell(row[c]))) : `${JSON.stringify(feedRecord(row))}\n`;
}

function cell(value: string | number | null): string {
  return value === null ? '' : String(value);
}
