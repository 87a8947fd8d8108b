/**
 * Products: business key `item_id`. Custom columns travel as extra columns of a products CSV import and, in the
 * default dialect, as extra top-level string fields of JSON writes (ProductWrite's catchall); they come back as
 * top-level fields of the enriched read. A dialect may drop or refuse extra fields of JSON writes instead (the
 * document promises custom columns only through CSV import): imports keep them in every dialect. A custom column
 * set to null (or an empty CSV cell) is removed. `id` and `updated_at` cannot be custom column names: they would
 * shadow the record's own fields. The price fields of the platform's product record (PRODUCT_DECIMAL_FIELDS) must
 * be decimals.
 */
import type { z } from 'zod';
import {
  BUSINESS_KEYS,
  DECIMAL_PATTERN,
  LIST_LIMITS,
  PRODUCT_CANONICAL_FIELDS,
  PRODUCT_DECIMAL_FIELDS,
  ProductPatch,
  ProductPatchStrict,
  ProductPatchStripped,
  ProductWrite,
  ProductWriteStrict,
  ProductWriteStripped,
} from '../api/schemas/index.ts';
import type { Dialect } from './dialect.ts';
import { EntityTable, type TableRow } from './entity-table.ts';
import { UuidCodec } from './id-codec.ts';
import { isoTime } from './http-io.ts';
import type { Prng } from './prng.ts';
import type { Resource } from './resource.ts';
import { NO_PRECHECK, compilePrecheck } from './schema-precheck.ts';

const CANONICAL = new Set<string>(PRODUCT_CANONICAL_FIELDS);
const RESERVED = new Set(['id', 'updated_at']);

export class ProductRow implements TableRow {
  readonly id: string;
  key: string | null = null;
  seq = 0;
  updatedAt = 0;
  item_id = '';
  sku = '';
  product_id: string | null = null;
  product_name: string | null = null;
  brand: string | null = null;
  manufacturer: string | null = null;
  product_type: string | null = null;
  status: string | null = null;
  /** Custom columns with a value; null when there are none (most rows: no object allocated). */
  custom: Record<string, string> | null = null;

  constructor(id: string) {
    this.id = id;
  }
}

export type ProductResource = Resource<ProductRow, ProductWrite>;

function assign(row: ProductRow, w: ProductWrite): void {
  row.key = BUSINESS_KEYS.products(w);
  row.item_id = w.item_id;
  row.sku = w.sku;
  row.product_id = w.product_id ?? null;
  row.product_name = w.product_name ?? null;
  row.brand = w.brand ?? null;
  row.manufacturer = w.manufacturer ?? null;
  row.product_type = w.product_type ?? null;
  row.status = w.status ?? null;
  let custom: Record<string, string> | null = null;
  for (const [name, value] of Object.entries(w)) {
    if (CANONICAL.has(name) || typeof value !== 'string') continue;
    custom ??= {};
    custom[name] = value;
  }
  row.custom = custom;
}

/** A row as a write: the canonical fields, then the custom columns (what a PATCH merges into). */
function toWrite(row: ProductRow): ProductWrite {
  return {
    item_id: row.item_id,
    sku: row.sku,
    product_id: row.product_id,
    product_name: row.product_name,
    brand: row.brand,
    manufacturer: row.manufacturer,
    product_type: row.product_type,
    status: row.status,
    ...row.custom,
  };
}

const JSON_SCHEMAS: Record<Dialect['productExtraFields'], { write: z.ZodType<ProductWrite>; patch: z.ZodType<ProductPatch> }> = {
  stored: { write: ProductWrite, patch: ProductPatch },
  dropped: { write: ProductWriteStripped, patch: ProductPatchStripped },
  rejected: { write: ProductWriteStrict, patch: ProductPatchStrict },
};

/** A value of a price field that is not a decimal string (numbers are refused by the schema already). */
function badDecimal(w: Readonly<Record<string, unknown>>): string | null {
  for (const name of PRODUCT_DECIMAL_FIELDS) {
    const value = w[name];
    if (typeof value === 'string' && !DECIMAL_PATTERN.test(value)) return name;
  }
  return null;
}

/**
 * The products resource of JSON writes (per the dialect's `productExtraFields`) and the one of CSV imports (custom
 * columns kept); both over the same table.
 */
export function createProducts(ids: Prng, extraFields: Dialect['productExtraFields'] = 'stored'): { json: ProductResource; csv: ProductResource } {
  const csv = productResource(new EntityTable<ProductRow>(new UuidCodec(ids)), JSON_SCHEMAS.stored);
  return { json: extraFields === 'stored' ? csv : productResource(csv.table, JSON_SCHEMAS[extraFields]), csv };
}

function productResource(table: EntityTable<ProductRow>, schemas: (typeof JSON_SCHEMAS)[keyof typeof JSON_SCHEMAS]): ProductResource {
  return {
    name: 'products',
    table,
    precheck: compilePrecheck(schemas.write) ?? NO_PRECHECK,
    writeSchema: schemas.write,
    patchSchema: schemas.patch,
    idKind: 'uuid',
    keyField: 'item_id',
    rejectDuplicateKeys: false,
    requiredColumns: ['item_id', 'sku'],
    knownColumns: null,
    limits: LIST_LIMITS.products,
    list: { envelope: 'items', filters: {}, matcher: () => () => true },
    keyOf: BUSINESS_KEYS.products,
    check(w) {
      for (const name of Object.keys(w)) {
        if (RESERVED.has(name)) {
          return { code: 'validation_error', field: name, message: `${name}: Value error, reserved name, cannot be a custom column` };
        }
      }
      const decimal = badDecimal(w);
      if (decimal !== null) {
        return { code: 'validation_error', field: decimal, message: `${decimal}: Input should be a valid decimal`, type: 'decimal_parsing' };
      }
      return null;
    },
    create(id, w) {
      const row = new ProductRow(id);
      assign(row, w);
      return row;
    },
    assign,
    toWrite,
    // The API's product is its write with the id first and updated_at last.
    toJson: (row) => ({ id: row.id, ...toWrite(row), updated_at: isoTime(row.updatedAt) }),
    fromCsv: (cells) => ({ ...cells }),
  };
}
