/**
 * Transactions: business key `transaction_id` (required on write: our choice, it is what makes bulk idempotent).
 * The hot path of the ingest benchmark, so rows are compact fixed-shape objects and repeated strings (store ids,
 * currencies, product codes) are interned.
 *
 * Read shape (list item and single-upsert response), per the spec's list fields: `timestamp` is the write's
 * `transaction_timestamp`, `product_id` is the write's product_id or else its item_id; `id` (internal UUID) and
 * `item_id` are extra fields.
 */
import type { z } from 'zod';
import { LIST_LIMITS, TransactionPatchInput, TransactionWriteInput, TransactionWrite as TransactionWriteSchema } from '../api/schemas/index.ts';
import { EntityTable, type TableRow } from './entity-table.ts';
import { UuidCodec } from './id-codec.ts';
import { isoTime } from './http-io.ts';
import type { Prng } from './prng.ts';
import { StringPool, type Resource } from './resource.ts';
import { NO_PRECHECK, compilePrecheck } from './schema-precheck.ts';

type TransactionWrite = z.output<typeof TransactionWriteInput>;

export interface TransactionRow extends TableRow {
  readonly id: string;
  transaction_id: string;
  item_id: string;
  transaction_timestamp: string;
  product_id: string | null;
  store_id: string | null;
  quantity: string | null;
  price: string | null;
  revenue: string | null;
  currency: string | null;
  is_promo: boolean | null;
}

export type TransactionResource = Resource<TransactionRow, TransactionWrite>;

const TRUE_WORDS = new Set(['true', '1', 'yes', 'y', 't']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'n', 'f']);

export function createTransactions(ids: Prng): TransactionResource {
  const table = new EntityTable<TransactionRow>(new UuidCodec(ids));
  const pool = new StringPool();

  function assign(row: TransactionRow, w: TransactionWrite): void {
    row.key = w.transaction_id;
    row.transaction_id = w.transaction_id;
    row.item_id = w.item_id;
    row.transaction_timestamp = w.transaction_timestamp;
    row.product_id = pool.intern(w.product_id ?? null);
    row.store_id = pool.intern(w.store_id ?? null);
    row.quantity = w.quantity ?? null;
    row.price = w.price ?? null;
    row.revenue = w.revenue ?? null;
    row.currency = pool.intern(w.currency ?? null);
    row.is_promo = w.is_promo ?? null;
  }

  return {
    name: 'transactions',
    table,
    precheck: compilePrecheck(TransactionWriteSchema) ?? NO_PRECHECK,
    writeSchema: TransactionWriteInput,
    patchSchema: TransactionPatchInput,
    idKind: 'uuid',
    keyField: 'transaction_id',
    rejectDuplicateKeys: false,
    requiredColumns: ['transaction_id', 'item_id', 'transaction_timestamp'],
    knownColumns: Object.keys(TransactionWriteInput.shape),
    limits: LIST_LIMITS.transactions,
    list: {
      envelope: 'data',
      filters: { from_date: 'datetime', to_date: 'datetime', product_id: 'string', store_id: 'string' },
      matcher(filters) {
        const from = filters.from_date === undefined ? null : Date.parse(filters.from_date);
        const to = filters.to_date === undefined ? null : Date.parse(filters.to_date);
        const { product_id: productId, store_id: storeId } = filters;
        return (row) => {
          if (productId !== undefined && (row.product_id ?? row.item_id) !== productId) return false;
          if (storeId !== undefined && row.store_id !== storeId) return false;
          if (from === null && to === null) return true;
          const at = Date.parse(row.transaction_timestamp);
          return (from === null || at >= from) && (to === null || at <= to);
        };
      },
    },
    keyOf: (w) => w.transaction_id,
    create(id, w) {
      // An object literal, not `new`: V8 tracks literal allocation sites and, seeing that every row survives,
      // allocates them straight in the old generation instead of copying each one twice through the young one.
      return {
        id,
        key: w.transaction_id,
        seq: 0,
        updatedAt: 0,
        transaction_id: w.transaction_id,
        item_id: w.item_id,
        transaction_timestamp: w.transaction_timestamp,
        product_id: pool.intern(w.product_id ?? null),
        store_id: pool.intern(w.store_id ?? null),
        quantity: w.quantity ?? null,
        price: w.price ?? null,
        revenue: w.revenue ?? null,
        currency: pool.intern(w.currency ?? null),
        is_promo: w.is_promo ?? null,
      };
    },
    assign,
    toWrite: (row) => ({
      transaction_id: row.transaction_id,
      item_id: row.item_id,
      transaction_timestamp: row.transaction_timestamp,
      product_id: row.product_id,
      store_id: row.store_id,
      quantity: row.quantity,
      price: row.price,
      revenue: row.revenue,
      currency: row.currency,
      is_promo: row.is_promo,
    }),
    toJson: (row) => ({
      id: row.id,
      transaction_id: row.transaction_id,
      product_id: row.product_id ?? row.item_id,
      store_id: row.store_id,
      timestamp: row.transaction_timestamp,
      quantity: row.quantity,
      price: row.price,
      revenue: row.revenue,
      currency: row.currency,
      is_promo: row.is_promo,
      item_id: row.item_id,
      updated_at: isoTime(row.updatedAt),
    }),
    fromCsv(cells) {
      const out: Record<string, unknown> = { ...cells };
      const promo = cells.is_promo;
      if (promo !== undefined) {
        const lower = promo.trim().toLowerCase();
        if (TRUE_WORDS.has(lower)) out.is_promo = true;
        else if (FALSE_WORDS.has(lower)) out.is_promo = false;
      }
      return out;
    },
  };
}
