/**
 * Transactions. The spec validates item_id and transaction_timestamp on write and shows no other write field;
 * our documented choice (docs/sandbox.md): `transaction_id` is the required business key that makes bulk
 * idempotent, and the other fields mirror the read side.
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
} from './common.ts';
import { listPage } from './envelopes.ts';

function transactionFields<D extends DecimalSchema>(decimal: D) {
  return {
    transaction_id: identifier,
    item_id: identifier,
    transaction_timestamp: isoDateTime,
    product_id: optionalIdentifier,
    store_id: optionalIdentifier,
    quantity: decimal.nullable().optional(),
    price: decimal.nullable().optional(),
    revenue: decimal.nullable().optional(),
    currency: optionalText,
    is_promo: z.boolean().nullable().optional(),
  };
}

export const TransactionWrite = z.strictObject(transactionFields(decimalString));
export type TransactionWrite = z.infer<typeof TransactionWrite>;
export const TransactionWriteInput = z.strictObject(transactionFields(decimalInput));

export const TransactionPatch = TransactionWrite.partial();
export type TransactionPatch = z.infer<typeof TransactionPatch>;
export const TransactionPatchInput = TransactionWriteInput.partial();

/** A transaction as the list returns it: transaction_id and timestamp required, the rest kept as sent. */
export const Transaction = z.looseObject({
  transaction_id: z.string(),
  product_id: nullish(z.string()),
  store_id: nullish(z.string()),
  timestamp: readDateTime,
  updated_at: nullish(readDateTime),
});
export type Transaction = z.infer<typeof Transaction>;

export const TransactionPage = listPage(Transaction);
export type TransactionPage = z.infer<typeof TransactionPage>;

export const TRANSACTION_FIELDS = Object.keys(transactionFields(decimalString)) as (keyof TransactionWrite)[];
