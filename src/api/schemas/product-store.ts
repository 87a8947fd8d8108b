/** Product-store records: one per (item_id, store_id); a record without store_id is product-level. */
import { z } from 'zod';
import {
  type DecimalSchema,
  decimalInput,
  decimalString,
  identifier,
  isoDate,
  nullish,
  optionalIdentifier,
  optionalText,
  readDateTime,
} from './common.ts';
import { listPage } from './envelopes.ts';

function productStoreFields<D extends DecimalSchema>(decimal: D) {
  return {
    item_id: identifier,
    store_id: identifier,
    current_price: decimal,
    sku: optionalIdentifier,
    store_name: optionalText,
    country_code: optionalText,
    regular_price: decimal.nullable().optional(),
    unit_cost: decimal.nullable().optional(),
    stock_on_hand: z.number().int().nullable().optional(),
    status: optionalText,
    tax_rate: decimal.nullable().optional(),
    currency: optionalText,
    price_effective_date: isoDate.nullable().optional(),
  };
}

/** What the agent sends: decimals as strings only; unknown keys are an error. */
export const ProductStoreWrite = z.strictObject(productStoreFields(decimalString));
export type ProductStoreWrite = z.infer<typeof ProductStoreWrite>;
/** What the API accepts: decimals as strings or numbers. */
export const ProductStoreWriteInput = z.strictObject(productStoreFields(decimalInput));

/**
 * A product-level record: a product_store record without a store ("a record without store_id is product-level";
 * "payloads omitting store_id remain product-level"). What a `product_level` source sends; docs/mapping.md says
 * which servers take it.
 */
export const ProductLevelWrite = ProductStoreWrite.omit({ store_id: true });
export type ProductLevelWrite = z.infer<typeof ProductLevelWrite>;

export const ProductStorePatch = ProductStoreWrite.partial();
export type ProductStorePatch = z.infer<typeof ProductStorePatch>;
export const ProductStorePatchInput = ProductStoreWriteInput.partial();

/** A product-store record as read: id and item_id required, the rest kept as sent. */
export const ProductStoreRecord = z.looseObject({
  id: z.string(),
  item_id: z.string(),
  store_id: nullish(z.string()),
  sku: nullish(z.string()),
  updated_at: nullish(readDateTime),
});
export type ProductStoreRecord = z.infer<typeof ProductStoreRecord>;

export const ProductStorePage = listPage(ProductStoreRecord);
export type ProductStorePage = z.infer<typeof ProductStorePage>;

export const PRODUCT_STORE_FIELDS = Object.keys(productStoreFields(decimalString)) as (keyof ProductStoreWrite)[];
