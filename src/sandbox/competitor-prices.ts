/**
 * Competitor prices: integer ids (1, 2, 3, ...). Bulk and imports are idempotent on the business key
 * (competitor_name, item_id, competitor_sku, observed_at), observed_at compared as an instant. The single create
 * (`POST /v1/competitor_prices`) makes a new row every time, as the spec warns; it is counted separately so tests
 * can assert that an agent never created one twice. The key index keeps the first row that had a key, so a bulk row
 * after a single create with the same key updates that row.
 *
 * Read fields are the spec's list: `effective_price` is write-side only (stored, not returned).
 */
import type { z } from 'zod';
import { BUSINESS_KEYS, CompetitorPricePatchInput, CompetitorPriceWriteInput, LIST_LIMITS, CompetitorPriceWrite as CompetitorPriceWriteSchema } from '../api/schemas/index.ts';
import { EntityTable, type TableRow } from './entity-table.ts';
import { integerIds } from './id-codec.ts';
import { isoTime } from './http-io.ts';
import { StringPool, type Resource } from './resource.ts';
import { NO_PRECHECK, compilePrecheck } from './schema-precheck.ts';

type CompetitorPriceWrite = z.output<typeof CompetitorPriceWriteInput>;

export class CompetitorPriceRow implements TableRow {
  readonly id: number;
  key: string | null = null;
  seq = 0;
  updatedAt = 0;
  readonly createdAt: number;
  competitor_name = '';
  observed_at = '';
  regular_price = '';
  effective_price = '';
  item_id: string | null = null;
  promo_price: string | null = null;
  currency: string | null = null;
  source_url: string | null = null;
  competitor_sku: string | null = null;
  barcode: string | null = null;
  status: string | null = null;
  stock_on_hand: string | null = null;

  constructor(id: number, createdAt: number) {
    this.id = id;
    this.createdAt = createdAt;
  }
}

export interface CompetitorPriceResource extends Resource<CompetitorPriceRow, CompetitorPriceWrite> {
  /** Rows made by the single create, which is not idempotent. */
  readonly singleCreates: () => number;
  /** POST /v1/competitor_prices: always a new row. */
  createSingle(w: CompetitorPriceWrite, now: number): CompetitorPriceRow;
}

const competitorKey = BUSINESS_KEYS.competitor_prices;

/** A row as a write (what a PATCH merges into). */
function toWrite(row: CompetitorPriceRow): CompetitorPriceWrite {
  return {
    competitor_name: row.competitor_name,
    observed_at: row.observed_at,
    regular_price: row.regular_price,
    effective_price: row.effective_price,
    item_id: row.item_id,
    promo_price: row.promo_price,
    currency: row.currency,
    source_url: row.source_url,
    competitor_sku: row.competitor_sku,
    barcode: row.barcode,
    status: row.status,
    stock_on_hand: row.stock_on_hand,
  };
}

export function createCompetitorPrices(now: () => number): CompetitorPriceResource {
  const table = new EntityTable<CompetitorPriceRow>(integerIds);
  const pool = new StringPool();
  let singles = 0;

  function assign(row: CompetitorPriceRow, w: CompetitorPriceWrite): void {
    row.key = competitorKey(w);
    row.competitor_name = pool.intern(w.competitor_name);
    row.observed_at = w.observed_at;
    row.regular_price = w.regular_price;
    row.effective_price = w.effective_price;
    row.item_id = w.item_id ?? null;
    row.promo_price = w.promo_price ?? null;
    row.currency = pool.intern(w.currency ?? null);
    row.source_url = w.source_url ?? null;
    row.competitor_sku = w.competitor_sku ?? null;
    row.barcode = w.barcode ?? null;
    row.status = pool.intern(w.status ?? null);
    row.stock_on_hand = w.stock_on_hand ?? null;
  }

  function create(id: number, w: CompetitorPriceWrite): CompetitorPriceRow {
    const row = new CompetitorPriceRow(id, now());
    assign(row, w);
    return row;
  }

  return {
    name: 'competitor_prices',
    table,
    precheck: compilePrecheck(CompetitorPriceWriteSchema) ?? NO_PRECHECK,
    writeSchema: CompetitorPriceWriteInput,
    patchSchema: CompetitorPricePatchInput,
    idKind: 'int',
    keyField: 'competitor_name',
    rejectDuplicateKeys: false,
    requiredColumns: ['competitor_name', 'observed_at', 'regular_price', 'effective_price'],
    knownColumns: Object.keys(CompetitorPriceWriteInput.shape),
    limits: LIST_LIMITS.competitor_prices,
    list: {
      envelope: 'items',
      filters: { item_id: 'string', competitor_name: 'string' },
      matcher: ({ item_id: itemId, competitor_name: name }) => (row) =>
        (itemId === undefined || row.item_id === itemId) && (name === undefined || row.competitor_name === name),
    },
    keyOf: competitorKey,
    create,
    assign,
    singleCreates: () => singles,
    createSingle(w, at) {
      singles += 1;
      const row = create(table.issueId(), w);
      table.insert(row, at);
      return row;
    },
    toWrite,
    // The JSON is the write between id and the times, without effective_price (write-side only: docs/sandbox.md).
    toJson: (row) => {
      const { effective_price: _, ...fields } = toWrite(row);
      return { id: row.id, ...fields, created_at: isoTime(row.createdAt), updated_at: isoTime(row.updatedAt) };
    },
    fromCsv: (cells) => ({ ...cells }),
  };
}
