/**
 * Product-store records: business key (item_id, store_id); store_id must be one of the seeded stores. In a bulk
 * batch (and in one import file) an unknown store is the row error `unknown_store` and every later occurrence of a
 * key already seen is `duplicate_key` (the first occurrence is written). Single POST and PATCH answer 422 on
 * ['body', 'store_id'] for an unknown store. A write without store_id is refused as missing, or, in a dialect that
 * reads the document so (`productStoreWithoutStore: 'product_level'`), stored as the item's product-level record
 * (store_id null, keyed by item_id alone).
 */
import type { z } from 'zod';
import { BUSINESS_KEYS, LIST_LIMITS, ProductStorePatchInput, ProductStoreWriteInput, ProductStoreWrite as ProductStoreWriteSchema } from '../api/schemas/index.ts';
import type { Dialect } from './dialect.ts';
import { EntityTable, type TableRow } from './entity-table.ts';
import { UuidCodec } from './id-codec.ts';
import { isoTime } from './http-io.ts';
import type { Prng } from './prng.ts';
import { StringPool, type Resource } from './resource.ts';
import { NO_PRECHECK, compilePrecheck } from './schema-precheck.ts';

/** Writes without store_id, in a dialect that takes them as product-level records. */
const ProductLevelInput = ProductStoreWriteInput.extend({ store_id: ProductStoreWriteInput.shape.store_id.optional() });
type ProductStoreWrite = z.output<typeof ProductLevelInput>;

export class ProductStoreRow implements TableRow {
  readonly id: string;
  key: string | null = null;
  seq = 0;
  updatedAt = 0;
  item_id = '';
  store_id: string | null = '';
  current_price = '';
  sku: string | null = null;
  store_name: string | null = null;
  country_code: string | null = null;
  regular_price: string | null = null;
  unit_cost: string | null = null;
  stock_on_hand: number | null = null;
  status: string | null = null;
  tax_rate: string | null = null;
  currency: string | null = null;
  price_effective_date: string | null = null;

  constructor(id: string) {
    this.id = id;
  }
}

export type ProductStoreResource = Resource<ProductStoreRow, ProductStoreWrite>;


const keyOf = BUSINESS_KEYS.product_store;

/** The store facts of a row, in the API's order: the same fields, in the same order, in its write and its JSON. */
function storeFacts(row: ProductStoreRow) {
  return {
    store_name: row.store_name,
    country_code: row.country_code,
    regular_price: row.regular_price,
    unit_cost: row.unit_cost,
    stock_on_hand: row.stock_on_hand,
    status: row.status,
    tax_rate: row.tax_rate,
    currency: row.currency,
    price_effective_date: row.price_effective_date,
  };
}

export function createProductStore(ids: Prng, stores: ReadonlySet<string>, withoutStore: Dialect['productStoreWithoutStore'] = 'refused'): ProductStoreResource {
  const productLevel = withoutStore === 'product_level';
  const table = new EntityTable<ProductStoreRow>(new UuidCodec(ids));
  const pool = new StringPool();

  function assign(row: ProductStoreRow, w: ProductStoreWrite): void {
    row.key = keyOf(w);
    row.item_id = w.item_id;
    row.store_id = pool.intern(w.store_id ?? null);
    row.current_price = w.current_price;
    row.sku = w.sku ?? null;
    row.store_name = pool.intern(w.store_name ?? null);
    row.country_code = pool.intern(w.country_code ?? null);
    row.regular_price = w.regular_price ?? null;
    row.unit_cost = w.unit_cost ?? null;
    row.stock_on_hand = w.stock_on_hand ?? null;
    row.status = pool.intern(w.status ?? null);
    row.tax_rate = w.tax_rate ?? null;
    row.currency = pool.intern(w.currency ?? null);
    row.price_effective_date = w.price_effective_date ?? null;
  }

  return {
    name: 'product_store',
    table,
    precheck: compilePrecheck(ProductStoreWriteSchema) ?? NO_PRECHECK,
    writeSchema: productLevel ? ProductLevelInput : ProductStoreWriteInput,
    patchSchema: ProductStorePatchInput,
    idKind: 'uuid',
    keyField: 'item_id',
    rejectDuplicateKeys: true,
    requiredColumns: productLevel ? ['item_id', 'current_price'] : ['item_id', 'store_id', 'current_price'],
    knownColumns: Object.keys(ProductStoreWriteInput.shape),
    limits: LIST_LIMITS.product_store,
    list: {
      envelope: 'items',
      filters: { item_id: 'string', store_id: 'string' },
      matcher: ({ item_id: itemId, store_id: storeId }) => (row) =>
        (itemId === undefined || row.item_id === itemId) && (storeId === undefined || row.store_id === storeId),
    },
    keyOf,
    check: (w) =>
      w.store_id === undefined || stores.has(w.store_id)
        ? null
        : { code: 'unknown_store', field: 'store_id', message: `store_id: Value error, unknown store '${w.store_id}'` },
    create(id, w) {
      const row = new ProductStoreRow(id);
      assign(row, w);
      return row;
    },
    assign,
    toWrite: (row) => ({
      item_id: row.item_id,
      ...(row.store_id === null ? {} : { store_id: row.store_id }),
      current_price: row.current_price,
      sku: row.sku,
      ...storeFacts(row),
    }),
    toJson: (row) => ({
      id: row.id,
      item_id: row.item_id,
      store_id: row.store_id,
      sku: row.sku,
      current_price: row.current_price,
      ...storeFacts(row),
      updated_at: isoTime(row.updatedAt),
    }),
    fromCsv(cells) {
      const out: Record<string, unknown> = { ...cells };
      const stock = cells.stock_on_hand;
      if (stock !== undefined && /^[+-]?\d+$/.test(stock.trim())) out.stock_on_hand = Number(stock.trim());
      return out;
    },
  };
}
