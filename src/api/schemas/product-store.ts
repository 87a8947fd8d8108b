/** Product-store records: one per (item_id, store_id); a record without store_id is product-level. */
import { z } from 'zod';
import {
  type DecimalSchema,
  decimalInput,
  decimalString,
  identifier,
  isoDate,
  isoDateTime,
  nextCursor,
  optionalIdentifier,
  optionalText,
} from './common.ts';

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

export const ProductStorePatch = ProductStoreWrite.partial();
export type ProductStorePatch = z.infer<typeof ProductStorePatch>;
export const ProductStorePatchInput = ProductStoreWriteInput.partial();

export const ProductStoreRecord = z.looseObject({
  id: z.string(),
  item_id: z.string(),
  store_id: z.string().nullable(),
  current_price: z.string().nullable().optional(),
  sku: z.string().nullable().optional(),
  store_name: z.string().nullable().optional(),
  country_code: z.string().nullable().optional(),
  regular_price: z.string().nullable().optional(),
  unit_cost: z.string().nullable().optional(),
  stock_on_hand: z.number().int().nullable().optional(),
  status: z.string().nullable().optional(),
  tax_rate: z.string().nullable().optional(),
  currency: z.string().nullable().optional(),
  price_effective_date: z.string().nullable().optional(),
  updated_at: isoDateTime.optional(),
});
export type ProductStoreRecord = z.infer<typeof ProductStoreRecord>;

export const ProductStorePage = z.looseObject({ items: z.array(ProductStoreRecord), next_cursor: nextCursor });
export type ProductStorePage = z.infer<typeof ProductStorePage>;

export const PRODUCT_STORE_FIELDS = Object.keys(productStoreFields(decimalString)) as (keyof ProductStoreWrite)[];
