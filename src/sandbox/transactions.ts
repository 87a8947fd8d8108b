/**
 * Transactions: business key `transaction_id` (required on write: our choice, it is what makes bulk idempotent).
 * The hot path of the ingest benchmark and the largest table, so rows are kept in columns (TransactionColumns)
 * rather than as an object each: per row the garbage collector has nothing to trace but a few array slots, and a
 * million rows take about 170 bytes each (row objects took 360). Repeated strings (item, product and store ids,
 * currencies) are interned.
 *
 * Read shape (list item and single-upsert response), per the spec's list fields: `timestamp` is the write's
 * `transaction_timestamp`, `product_id` is the write's product_id or else its item_id; `id` (internal UUID) and
 * `item_id` are extra fields.
 */
import type { z } from 'zod';
import { LIST_LIMITS, TransactionPatchInput, TransactionWriteInput, TransactionWrite as TransactionWriteSchema } from '../api/schemas/index.ts';
import { EntityTable, type RowStore, type TableRow } from './entity-table.ts';
import { UuidCodec } from './id-codec.ts';
import { isoTime } from './http-io.ts';
import type { Prng } from './prng.ts';
import { StringPool, type Resource } from './resource.ts';
import { NO_PRECHECK, compilePrecheck } from './schema-precheck.ts';
import { StringColumn } from './string-column.ts';

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

const MIN_SLOTS = 1024;
/** is_promo in a byte: null, false, true. */
const PROMO_NULL = 0;
const PROMO_FALSE = 1;
const PROMO_TRUE = 2;

/**
 * The transactions table's row store: the id and timestamp, nearly unique per row, as bytes (string-column.ts);
 * the other strings, mostly shared (interned, or short ones JSON.parse already shares), in arrays; is_promo,
 * seq and updated_at in typed arrays. A read makes a new row object; the key of a row is its transaction_id.
 */
export class TransactionColumns implements RowStore<TransactionRow> {
  readonly #transactionIds = new StringColumn();
  readonly #timestamps = new StringColumn();
  #capacity = 0;
  #itemIds: string[] = [];
  #productIds: (string | null)[] = [];
  #storeIds: (string | null)[] = [];
  #quantities: (string | null)[] = [];
  #prices: (string | null)[] = [];
  #revenues: (string | null)[] = [];
  #currencies: (string | null)[] = [];
  #promo = new Uint8Array(0);
  #seqs = new Float64Array(0);
  #updatedAt = new Float64Array(0);

  save(slot: number, row: TransactionRow): void {
    if (slot >= this.#capacity) this.#grow(slot);
    this.#transactionIds.set(slot, row.transaction_id);
    this.#timestamps.set(slot, row.transaction_timestamp);
    this.#itemIds[slot] = row.item_id;
    this.#productIds[slot] = row.product_id;
    this.#storeIds[slot] = row.store_id;
    this.#quantities[slot] = row.quantity;
    this.#prices[slot] = row.price;
    this.#revenues[slot] = row.revenue;
    this.#currencies[slot] = row.currency;
    this.#promo[slot] = row.is_promo === null ? PROMO_NULL : row.is_promo ? PROMO_TRUE : PROMO_FALSE;
    this.#seqs[slot] = row.seq;
    this.#updatedAt[slot] = row.updatedAt;
  }

  load(slot: number, id: string): TransactionRow | undefined {
    if (this.seqAt(slot) === 0) return undefined;
    const transactionId = this.#transactionIds.get(slot)!;
    const promo = this.#promo[slot];
    return {
      id,
      key: transactionId,
      seq: this.#seqs[slot]!,
      updatedAt: this.#updatedAt[slot]!,
      transaction_id: transactionId,
      item_id: this.#itemIds[slot]!,
      transaction_timestamp: this.#timestamps.get(slot)!,
      product_id: this.#productIds[slot]!,
      store_id: this.#storeIds[slot]!,
      quantity: this.#quantities[slot]!,
      price: this.#prices[slot]!,
      revenue: this.#revenues[slot]!,
      currency: this.#currencies[slot]!,
      is_promo: promo === PROMO_NULL ? null : promo === PROMO_TRUE,
    };
  }

  hasKey(slot: number, key: string): boolean {
    return this.seqAt(slot) !== 0 && this.#transactionIds.equals(slot, key);
  }

  seqAt(slot: number): number {
    return slot < this.#capacity ? this.#seqs[slot]! : 0;
  }

  clear(slot: number): void {
    if (slot >= this.#capacity) return;
    this.#transactionIds.set(slot, null);
    this.#timestamps.set(slot, null);
    this.#itemIds[slot] = '';
    this.#productIds[slot] = null;
    this.#storeIds[slot] = null;
    this.#quantities[slot] = null;
    this.#prices[slot] = null;
    this.#revenues[slot] = null;
    this.#currencies[slot] = null;
    this.#seqs[slot] = 0;
  }

  /**
   * Room for `slot` in every column: capacity grows by half (a million rows leave at most a third unused). The
   * arrays are made at their full length and copied, so V8 adds no room of its own on top.
   */
  #grow(slot: number): void {
    const capacity = Math.max(slot + 1, MIN_SLOTS, Math.ceil(this.#capacity * 1.5));
    this.#itemIds = grownArray(this.#itemIds, capacity, '');
    this.#productIds = grownArray(this.#productIds, capacity, null);
    this.#storeIds = grownArray(this.#storeIds, capacity, null);
    this.#quantities = grownArray(this.#quantities, capacity, null);
    this.#prices = grownArray(this.#prices, capacity, null);
    this.#revenues = grownArray(this.#revenues, capacity, null);
    this.#currencies = grownArray(this.#currencies, capacity, null);
    const promo = new Uint8Array(capacity);
    promo.set(this.#promo);
    const seqs = new Float64Array(capacity);
    seqs.set(this.#seqs);
    const updatedAt = new Float64Array(capacity);
    updatedAt.set(this.#updatedAt);
    this.#promo = promo;
    this.#seqs = seqs;
    this.#updatedAt = updatedAt;
    this.#capacity = capacity;
  }
}

/** A copy of `array` with `capacity` elements, the new ones `fill`. */
function grownArray<T>(array: readonly T[], capacity: number, fill: T): T[] {
  const copy = new Array<T>(capacity);
  for (let i = 0; i < array.length; i += 1) copy[i] = array[i]!;
  copy.fill(fill, array.length);
  return copy;
}

const TRUE_WORDS = new Set(['true', '1', 'yes', 'y', 't']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'n', 'f']);

export function createTransactions(ids: Prng): TransactionResource {
  const table = new EntityTable<TransactionRow>(new UuidCodec(ids), new TransactionColumns());
  const pool = new StringPool();

  function assign(row: TransactionRow, w: TransactionWrite): void {
    row.key = w.transaction_id;
    row.transaction_id = w.transaction_id;
    row.item_id = pool.intern(w.item_id);
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
      // Short-lived: the table copies it into its columns.
      return {
        id,
        key: w.transaction_id,
        seq: 0,
        updatedAt: 0,
        transaction_id: w.transaction_id,
        item_id: pool.intern(w.item_id),
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
