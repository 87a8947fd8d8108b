/** Products: catalog items keyed by the SKU-level `item_id`. */
import { z } from 'zod';
import { MAX_TEXT_LENGTH, identifier, isoDateTime, nextCursor, optionalIdentifier, optionalText } from './common.ts';

const productFields = {
  item_id: identifier,
  // The spec lists sku among the fields whose absence is a 422 for products.
  sku: identifier,
  product_id: optionalIdentifier,
  product_name: optionalText,
  brand: optionalText,
  manufacturer: optionalText,
  product_type: optionalText,
  status: optionalText,
};

/**
 * A product as written (single upsert or bulk item). Unknown keys are custom columns, exactly as extra columns of
 * a products CSV import are (our documented choice: custom columns travel as extra top-level string fields).
 */
export const ProductWrite = z.object(productFields).catchall(z.string().max(MAX_TEXT_LENGTH).nullable());
export type ProductWrite = z.infer<typeof ProductWrite>;

/** PATCH body: any subset of the fields, custom columns included. */
export const ProductPatch = z
  .object({ ...productFields, item_id: identifier.optional(), sku: identifier.optional() })
  .catchall(z.string().max(MAX_TEXT_LENGTH).nullable());
export type ProductPatch = z.infer<typeof ProductPatch>;

/** An enriched product as read: the canonical fields, custom columns as extra keys. */
export const Product = z.looseObject({
  id: z.string(),
  item_id: z.string(),
  sku: z.string().nullable().optional(),
  product_id: z.string().nullable().optional(),
  product_name: z.string().nullable().optional(),
  brand: z.string().nullable().optional(),
  manufacturer: z.string().nullable().optional(),
  product_type: z.string().nullable().optional(),
  status: z.string().nullable().optional(),
  updated_at: isoDateTime.optional(),
});
export type Product = z.infer<typeof Product>;

export const ProductPage = z.looseObject({ items: z.array(Product), next_cursor: nextCursor });
export type ProductPage = z.infer<typeof ProductPage>;

/** Canonical product fields, in the order the agent writes them in an import CSV. */
export const PRODUCT_CANONICAL_FIELDS = Object.keys(productFields) as (keyof typeof productFields)[];
