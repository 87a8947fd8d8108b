/**
 * The compiled pre-check must never vouch for a row zod refuses, nor for one zod would change: checked on random
 * rows (fast-check) against every shared write schema.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CompetitorPriceWrite, ProductStoreWrite, ProductWrite, TransactionWrite } from '../../src/api/schemas/index.ts';
import { compilePrecheck } from '../../src/sandbox/schema-precheck.ts';

const interesting = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constantFrom('', 'x'.repeat(255), 'x'.repeat(256), '😀'.repeat(200), '\uD800', '2026-11-01T10:00:00Z', '2026-02-30T10:00:00Z'),
  fc.constantFrom('1.50', '-3', '.5', '1,5', '+.', '2026-11-01', 'not a date', '__proto__'),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.array(fc.string(), { maxLength: 2 }),
);

/** Valid rows with every field set; the property mutates them near the boundaries. */
const VALID: Record<string, Record<string, unknown>> = {
  TransactionWrite: {
    transaction_id: 'T',
    item_id: 'I',
    transaction_timestamp: '2026-11-01T10:00:00Z',
    product_id: 'P',
    store_id: 'S',
    quantity: '2',
    price: '1.5',
    revenue: '3.0',
    currency: 'EUR',
    is_promo: false,
  },
  ProductWrite: { item_id: 'I', sku: 'S', product_id: null, product_name: 'Tea', brand: 'B', manufacturer: 'M', product_type: 'T', status: 'a', Colour: 'red' },
  CompetitorPriceWrite: {
    competitor_name: 'M',
    observed_at: '2026-11-01T10:00:00+01:00',
    regular_price: '1',
    effective_price: '0.9',
    item_id: 'I',
    promo_price: null,
    currency: 'EUR',
    source_url: 'https://example.com',
    competitor_sku: 'C',
    barcode: '400',
    status: 'in_stock',
    stock_on_hand: '3',
  },
  ProductStoreWrite: {
    item_id: 'I',
    store_id: 'S',
    current_price: '2.00',
    sku: 'S',
    store_name: 'N',
    country_code: 'DE',
    regular_price: '2.10',
    unit_cost: '1.00',
    stock_on_hand: 4,
    status: 'active',
    tax_rate: '0.19',
    currency: 'EUR',
    price_effective_date: '2026-11-01',
  },
};

function mutations(fields: readonly string[]) {
  const key = fc.constantFrom(...fields, 'extra', 'Colour', '__proto__');
  // [key, null] deletes the key, [key, [value]] sets it.
  return fc.array(fc.tuple(key, fc.option(fc.tuple(interesting))), { maxLength: 3 });
}

function mutate(base: Record<string, unknown>, changes: [string, [unknown] | null][]): Record<string, unknown> {
  const row: Record<string, unknown> = JSON.parse(JSON.stringify(base)) as Record<string, unknown>;
  for (const [name, change] of changes) {
    if (change === null) delete row[name];
    else Object.defineProperty(row, name, { value: change[0], enumerable: true, writable: true, configurable: true });
  }
  return row;
}

describe('schema pre-check', () => {
  for (const [name, schema] of Object.entries({ TransactionWrite, ProductWrite, CompetitorPriceWrite, ProductStoreWrite })) {
    it(`agrees with zod on ${name}`, () => {
      const check = compilePrecheck(schema);
      expect(check).not.toBeNull();
      const fields = Object.keys(schema.shape);
      let accepted = 0;
      let refused = 0;
      fc.assert(
        fc.property(mutations(fields), (changes) => {
          const row = mutate(VALID[name]!, changes);
          if (!check!(row)) {
            refused += 1;
            return;
          }
          accepted += 1;
          const parsed = schema.safeParse(row);
          expect(parsed.success).toBe(true);
          expect(parsed.data).toEqual(row);
        }),
        { numRuns: 3000 },
      );
      expect(accepted).toBeGreaterThan(100);
      expect(refused).toBeGreaterThan(100);
    });

    it(`accepts a typical valid ${name} row`, () => {
      expect(compilePrecheck(schema)!(VALID[name])).toBe(true);
    });
  }

  it('turns itself off for constructs it does not mirror', () => {
    expect(compilePrecheck(z.object({ a: z.string().refine((v) => v !== 'x') }))).toBeNull();
    expect(compilePrecheck(z.object({ a: z.string().transform((v) => v.trim()) }))).toBeNull();
    expect(compilePrecheck(z.object({ a: z.string().default('x') }))).toBeNull();
    expect(compilePrecheck(z.object({ a: z.email() }))).toBeNull();
    expect(compilePrecheck(z.object({ a: z.coerce.string() }))).toBeNull();
    expect(compilePrecheck(z.object({ a: z.string() }).refine(() => true))).toBeNull();
    expect(compilePrecheck(z.object({ a: z.string() }))).not.toBeNull();
  });
});
