/**
 * Which API fields are decimals, integers, booleans, dates or datetimes: derived from the write schemas
 * themselves, so a field added to the contract gets the right conversion without a second table to forget.
 * A field whose schema is none of the known shapes fails at module load (the contract grew something the
 * reader cannot convert yet): loud at start-up beats a silent string.
 */
import { z } from 'zod';
import {
  CompetitorPriceWrite,
  ProductStoreWrite,
  ProductWrite,
  TransactionWrite,
  decimalString,
  isoDate,
  isoDateTime,
} from '../../api/schemas/index.ts';
import type { Entity } from '../../api/schemas/index.ts';

export type FieldKind = 'string' | 'decimal' | 'integer' | 'boolean' | 'date' | 'datetime';

export interface FieldInfo {
  readonly name: string;
  readonly kind: FieldKind;
  readonly required: boolean;
}

/** The agent-side write schema of each entity (decimals as strings only). */
export const WRITE_SCHEMAS = {
  products: ProductWrite,
  product_store: ProductStoreWrite,
  transactions: TransactionWrite,
  competitor_prices: CompetitorPriceWrite,
} as const;

/** The record a valid row of each entity becomes. */
export interface RecordOf {
  products: ProductWrite;
  product_store: ProductStoreWrite;
  transactions: TransactionWrite;
  competitor_prices: CompetitorPriceWrite;
}
export type EntityRecord = RecordOf[Entity];

function unwrap(schema: z.ZodType): z.ZodType {
  let inner = schema;
  while (inner instanceof z.ZodOptional || inner instanceof z.ZodNullable) inner = inner.unwrap() as z.ZodType;
  return inner;
}

function kindOf(entity: Entity, name: string, schema: z.ZodType): FieldKind {
  const inner = unwrap(schema);
  if (inner === decimalString) return 'decimal';
  if (inner === isoDate) return 'date';
  if (inner === isoDateTime) return 'datetime';
  if (inner instanceof z.ZodBoolean) return 'boolean';
  if (inner instanceof z.ZodNumber && inner.isInt) return 'integer';
  if (inner instanceof z.ZodString) return 'string';
  throw new Error(`${entity}.${name}: the reader has no conversion for this schema; extend field-kinds.ts`);
}

function fieldsOf(entity: Entity): readonly FieldInfo[] {
  const shape: Record<string, z.ZodType> = WRITE_SCHEMAS[entity].shape;
  return Object.entries(shape).map(([name, schema]) => ({
    name,
    kind: kindOf(entity, name, schema),
    required: !schema.safeParse(undefined).success,
  }));
}

/** The canonical fields of each entity, in schema order (the order of the canonical CSV's header). */
export const ENTITY_FIELDS: Readonly<Record<Entity, readonly FieldInfo[]>> = {
  products: fieldsOf('products'),
  product_store: fieldsOf('product_store'),
  transactions: fieldsOf('transactions'),
  competitor_prices: fieldsOf('competitor_prices'),
};

/** Products take extra columns as custom columns (string values); the other entities are strict. */
export function acceptsCustomColumns(entity: Entity): boolean {
  return entity === 'products';
}
