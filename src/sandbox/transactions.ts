/**
 * Transactions: business key `transaction_id` (required on write: our choice, it is what makes bulk idempotent).
 * The hot path of the ingest benchmark and the largest table, so rows are kept in columns (TransactionColumns)
 * rather than as an object each: per row the garbage collector has nothing to trace but a few array slots, and a
 * million rows take about 180 bytes each (row objects took 360). Repeated strings (item, product and store ids,
 * currencies) are interned.
 *
 * Read shape (list item and single-upsert response), per the spec's list fields: `timestamp` is the write's
 * `transaction_timestamp`, `product_id` is the write's product_id or else its item_id; `id` (internal UUID) and
 * `item_id` are extra fields.
 */
import type { z } from 'zod';
import { BUSINESS_KEYS, LIST_LIMITS, TransactionPatchInput, TransactionWriteInput, TransactionWrite as TransactionWriteSchema } from '../api/schemas/index.ts';
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

/** Rows per block of the transactions store (a power of two). */
const BLOCK_ROWS = 1024;
const BLOCK_SHIFT = 10;
/** Values per row in a block's `values`: item_id, product_id, store_id, quantity, price, revenue, currency, is_promo. */
const STRIDE = 8;

interface Block {
  readonly values: (string | boolean | null)[];
  readonly seqs: Float64Array;
  readonly updatedAt: Float64Array;
}

/**
 * The transactions table's row store: the id and timestamp, nearly unique per row, as bytes (string-column.ts);
 * the other values, mostly shared strings (interned, or short ones JSON.parse already shares), side by side in
 * blocks of 1024 rows, with seq and updated_at in typed arrays. Blocks are added, never copied: a growing array
 * of a million entries was copied each time it grew. A read makes a new row object; the key of a row is its
 * transaction_id.
 */
export class TransactionColumns implements RowStore<TransactionRow> {
  readonly #transactionIds = new StringColumn();
  readonly #timestamps = new StringColumn();
  readonly #blocks: Block[] = [];

  save(slot: number, row: TransactionRow): void {
    const block = this.#blocks[slot >>> BLOCK_SHIFT] ?? this.#addBlocks(slot);
    const i = slot & (BLOCK_ROWS - 1);
    const at = i * STRIDE;
    const values = block.values;
    this.#transactionIds.set(slot, row.transaction_id);
    this.#timestamps.set(slot, row.transaction_timestamp);
    values[at] = row.item_id;
    values[at + 1] = row.product_id;
    values[at + 2] = row.store_id;
    values[at + 3] = row.quantity;
    values[at + 4] = row.price;
    values[at + 5] = row.revenue;
    values[at + 6] = row.currency;
    values[at + 7] = row.is_promo;
    block.seqs[i] = row.seq;
    block.updatedAt[i] = row.updatedAt;
  }

  load(slot: number, id: string): TransactionRow | undefined {
    const block = this.#blocks[slot >>> BLOCK_SHIFT];
    const i = slot & (BLOCK_ROWS - 1);
    if (block === undefined || block.seqs[i] === 0) return undefined;
    const at = i * STRIDE;
    const values = block.values;
    const transactionId = this.#transactionIds.get(slot)!;
    return {
      id,
      key: transactionId,
      seq: block.seqs[i]!,
      updatedAt: block.updatedAt[i]!,
      transaction_id: transactionId,
      item_id: values[at] as string,
      transaction_timestamp: this.#timestamps.get(slot)!,
      product_id: values[at + 1] as string | null,
      store_id: values[at + 2] as string | null,
      quantity: values[at + 3] as string | null,
      price: values[at + 4] as string | null,
      revenue: values[at + 5] as string | null,
      currency: values[at + 6] as string | null,
      is_promo: values[at + 7] as boolean | null,
    };
  }

  hasKey(slot: number, key: string): boolean {
    return this.seqAt(slot) !== 0 && this.#transactionIds.equals(slot, key);
  }

  seqAt(slot: number): number {
    const block = this.#blocks[slot >>> BLOCK_SHIFT];
    return block === undefined ? 0 : block.seqs[slot & (BLOCK_ROWS - 1)]!;
  }

  clear(slot: number): void {
    const block = this.#blocks[slot >>> BLOCK_SHIFT];
    if (block === undefined) return;
    const i = slot & (BLOCK_ROWS - 1);
    this.#transactionIds.set(slot, null);
    this.#timestamps.set(slot, null);
    block.values.fill(null, i * STRIDE, (i + 1) * STRIDE);
    block.seqs[i] = 0;
  }

  /** Adds blocks up to the one holding `slot`, and returns that one. */
  #addBlocks(slot: number): Block {
    while (this.#blocks.length <= slot >>> BLOCK_SHIFT) {
      this.#blocks.push({
        values: new Array<string | boolean | null>(BLOCK_ROWS * STRIDE).fill(null),
        seqs: new Float64Array(BLOCK_ROWS),
        updatedAt: new Float64Array(BLOCK_ROWS),
      });
    }
    return this.#blocks[slot >>> BLOCK_SHIFT]!;
  }
}

const TRUE_WORDS = new Set(['true', '1', 'yes', 'y', 't']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'n', 'f']);

export function createTransactions(ids: Prng): TransactionResource {
  const table = new EntityTable<TransactionRow>(new UuidCodec(ids), new TransactionColumns());
  const pool = new StringPool();

  function assign(row: TransactionRow, w: TransactionWrite): void {
    row.key = BUSINESS_KEYS.transactions(w);
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
    keyOf: BUSINESS_KEYS.transactions,
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
