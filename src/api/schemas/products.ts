/** Products: catalog items keyed by the SKU-level `item_id`. */
import { z } from 'zod';
import { MAX_TEXT_LENGTH, identifier, nullish, optionalIdentifier, optionalText, readDateTime } from './common.ts';
import { listPage } from './envelopes.ts';

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

/**
 * Product writes without custom columns, for servers that do not take them in JSON (the document promises custom
 * columns only through CSV import): `ProductWriteStripped` drops unknown fields as such a server would,
 * `ProductWriteStrict` refuses them. The agent sends custom columns in JSON only to a server that keeps them.
 */
export const ProductWriteStripped = z.object(productFields);
export const ProductWriteStrict = z.strictObject(productFields);
export const ProductPatchStripped = ProductWriteStripped.partial();
export const ProductPatchStrict = ProductWriteStrict.partial();

/**
 * Price fields of the platform's full product record (not shown in the document, which lists "an unparsable
 * decimal" among the 422s of products): the sandbox refuses a value of them that is not a decimal. To the agent
 * they are columns like any other beyond the canonical ones.
 */
export const PRODUCT_DECIMAL_FIELDS = ['current_price', 'regular_price', 'unit_cost'] as const;

/** PATCH body: any subset of the fields, custom columns included. */
export const ProductPatch = z
  .object({ ...productFields, item_id: identifier.optional(), sku: identifier.optional() })
  .catchall(z.string().max(MAX_TEXT_LENGTH).nullable());
export type ProductPatch = z.infer<typeof ProductPatch>;

/** An enriched product as read: id and item_id required, the rest (custom columns included) kept as sent. */
export const Product = z.looseObject({
  id: z.string(),
  item_id: z.string(),
  sku: nullish(z.string()),
  product_id: nullish(z.string()),
  updated_at: nullish(readDateTime),
});
export type Product = z.infer<typeof Product>;

/** The products list: its body is not shown; rows under `items` or `data`. */
export const ProductPage = listPage(Product);
export type ProductPage = z.infer<typeof ProductPage>;

/** Canonical product fields, in the order the agent writes them in an import CSV. */
export const PRODUCT_CANONICAL_FIELDS = Object.keys(productFields) as (keyof typeof productFields)[];
