/**
 * The four writable resources (entities) and the business key of each: what bulk and imports are idempotent on
 * (docs/sandbox.md), so what decides whether two rows write the same record. Part of the contract both sides share:
 * the agent uses it to find rows of a file that write the same record (a later row must win over an earlier one);
 * the sandbox uses it as its upsert key. A change here shows up on both sides at once.
 *
 * Key fields are compared as the platform compares them: strings as they are, an absent optional field as empty,
 * and `observed_at` as an instant (`10:00:00Z` and `11:00:00+01:00` are the same observation).
 */

export const ENTITIES = ['products', 'product_store', 'transactions', 'competitor_prices'] as const;
export type Entity = (typeof ENTITIES)[number];

/** The fields of each entity's business key, in key order. */
export const BUSINESS_KEY_FIELDS = {
  products: ['item_id'],
  product_store: ['item_id', 'store_id'],
  transactions: ['transaction_id'],
  competitor_prices: ['competitor_name', 'item_id', 'competitor_sku', 'observed_at'],
} as const satisfies Record<Entity, readonly string[]>;

/** Between the parts of a key made of several fields: a character no identifier holds. */
export const KEY_SEPARATOR = '\u0001';

type Row = Readonly<Record<string, unknown>>;

/** A key part: strings as they are, anything else (absent, null) as empty. */
const part = (value: unknown): string => (typeof value === 'string' ? value : '');

/** An instant as epoch milliseconds, so that equal instants written with different offsets key alike. */
const instant = (value: unknown): string => {
  const text = part(value);
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? text : String(ms);
};

/**
 * The parts of a row's business key, in key order (BUSINESS_KEY_FIELDS'): what BUSINESS_KEYS joins, and what delta
 * push hashes one after the other without joining them (ingest/delta/compare.ts hashKey).
 */
export const BUSINESS_KEY_PARTS: Readonly<Record<Entity, (row: Row) => readonly string[]>> = {
  products: (r) => [part(r['item_id'])],
  product_store: (r) => [part(r['item_id']), part(r['store_id'])],
  transactions: (r) => [part(r['transaction_id'])],
  competitor_prices: (r) => [part(r['competitor_name']), part(r['item_id']), part(r['competitor_sku']), instant(r['observed_at'])],
};

/**
 * Whether an entity's key parts are its key fields' strings as they are (BUSINESS_KEY_FIELDS' order): then a key can be
 * hashed from the fields' text (delta push's first pass, from bytes). Not competitor prices: `observed_at` is keyed as an
 * instant.
 */
export const KEY_PARTS_AS_IS: Readonly<Record<Entity, boolean>> = {
  products: true,
  product_store: true,
  transactions: true,
  competitor_prices: false,
};

const joinedKey =
  (entity: Entity) =>
  (row: Row): string =>
    BUSINESS_KEY_PARTS[entity](row).join(KEY_SEPARATOR);

/** The business key of a row (an API write), as one string: equal strings mean the same record. */
export const BUSINESS_KEYS: Readonly<Record<Entity, (row: Row) => string>> = {
  products: joinedKey('products'),
  product_store: joinedKey('product_store'),
  transactions: joinedKey('transactions'),
  competitor_prices: joinedKey('competitor_prices'),
};

/** The entity named `name`, or undefined. */
export function entityNamed(name: string): Entity | undefined {
  return ENTITIES.find((e) => e === name);
}
