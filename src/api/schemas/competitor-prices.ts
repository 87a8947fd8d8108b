/**
 * Competitor prices. The only resource whose single create (`POST /v1/competitor_prices`) is not idempotent.
 * Bulk is idempotent per business key; our documented choice for that key (docs/sandbox.md) is
 * (competitor_name, item_id, competitor_sku, observed_at).
 */
import { z } from 'zod';
import {
  type DecimalSchema,
  decimalInput,
  decimalString,
  identifier,
  isoDateTime,
  nullish,
  optionalIdentifier,
  optionalText,
  readDateTime,
  readInteger,
} from './common.ts';
import { listPage } from './envelopes.ts';

function competitorPriceFields<D extends DecimalSchema>(decimal: D) {
  return {
    competitor_name: identifier,
    observed_at: isoDateTime,
    regular_price: decimal,
    effective_price: decimal,
    item_id: optionalIdentifier,
    promo_price: decimal.nullable().optional(),
    currency: optionalText,
    source_url: optionalText,
    competitor_sku: optionalIdentifier,
    barcode: optionalIdentifier,
    status: optionalText,
    stock_on_hand: optionalText,
  };
}

export const CompetitorPriceWrite = z.strictObject(competitorPriceFields(decimalString));
export type CompetitorPriceWrite = z.infer<typeof CompetitorPriceWrite>;
export const CompetitorPriceWriteInput = z.strictObject(competitorPriceFields(decimalInput));

export const CompetitorPricePatch = CompetitorPriceWrite.partial();
export type CompetitorPricePatch = z.infer<typeof CompetitorPricePatch>;
export const CompetitorPricePatchInput = CompetitorPriceWriteInput.partial();

/** A competitor price as read: id, competitor_name and observed_at required, the rest kept as sent. */
export const CompetitorPrice = z.looseObject({
  id: readInteger,
  competitor_name: z.string(),
  observed_at: readDateTime,
  item_id: nullish(z.string()),
  updated_at: nullish(readDateTime),
});
export type CompetitorPrice = z.infer<typeof CompetitorPrice>;

export const CompetitorPricePage = listPage(CompetitorPrice);
export type CompetitorPricePage = z.infer<typeof CompetitorPricePage>;

export const COMPETITOR_PRICE_FIELDS = Object.keys(
  competitorPriceFields(decimalString),
) as (keyof CompetitorPriceWrite)[];
