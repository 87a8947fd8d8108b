/**
 * The business key of each entity: what bulk is idempotent on (docs/sandbox.md), and so what decides whether two
 * rows of a file write the same record. A later row must win over an earlier one with the same key.
 */
import type { Entity } from '../config/source-schema.ts';

type Row = Readonly<Record<string, unknown>>;

/** Key fields are strings (validated by the write schemas); anything else keys as empty. */
const part = (value: unknown): string => (typeof value === 'string' ? value : '');

export const BUSINESS_KEYS: Record<Entity, (row: Row) => string> = {
  products: (r) => part(r['item_id']),
  product_store: (r) => `${part(r['item_id'])}\u0000${part(r['store_id'])}`,
  transactions: (r) => part(r['transaction_id']),
  competitor_prices: (r) =>
    `${part(r['competitor_name'])}\u0000${part(r['item_id'])}\u0000${part(r['competitor_sku'])}\u0000${part(r['observed_at'])}`,
};
