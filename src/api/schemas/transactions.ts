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
  nextCursor,
  optionalIdentifier,
  optionalText,
} from './common.ts';

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

/** A transaction as the list returns it. */
export const Transaction = z.looseObject({
  transaction_id: z.string(),
  product_id: z.string().nullable().optional(),
  store_id: z.string().nullable().optional(),
  timestamp: isoDateTime,
  quantity: z.string().nullable().optional(),
  price: z.string().nullable().optional(),
  revenue: z.string().nullable().optional(),
  currency: z.string().nullable().optional(),
  is_promo: z.boolean().nullable().optional(),
  updated_at: isoDateTime,
});
export type Transaction = z.infer<typeof Transaction>;

export const TransactionPage = z.looseObject({ data: z.array(Transaction), next_cursor: nextCursor });
export type TransactionPage = z.infer<typeof TransactionPage>;

export const TRANSACTION_FIELDS = Object.keys(transactionFields(decimalString)) as (keyof TransactionWrite)[];
