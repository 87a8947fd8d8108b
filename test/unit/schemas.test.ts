import { describe, expect, it } from 'vitest';
import type { ZodError } from 'zod';
import {
  AcknowledgeRequest,
  BUSINESS_KEY_FIELDS,
  BUSINESS_KEYS,
  CompetitorPriceWrite,
  DECIMAL_PATTERN,
  ENTITIES,
  ExportStatus,
  ProductStoreWrite,
  ProductStoreWriteInput,
  ProductWrite,
  TransactionWrite,
  toValidationErrors,
} from '../../src/api/schemas/index.ts';

function errorsOf(schema: { safeParse: (v: unknown, o: { reportInput: boolean }) => unknown }, value: unknown) {
  const result = schema.safeParse(value, { reportInput: true }) as { success: boolean; error?: ZodError };
  if (result.success || !result.error) return [];
  return toValidationErrors(result.error, ['body']);
}

describe('decimal pattern of the spec', () => {
  it.each(['1', '1.5', '-0.25', '+3', '.5', '5.', '007.10'])('accepts %s', (value) => {
    expect(DECIMAL_PATTERN.test(value)).toBe(true);
  });
  it.each(['', '.', '-', '+.', '1,5', '1e3', 'abc', '1.2.3', ' 1'])('rejects %j', (value) => {
    expect(DECIMAL_PATTERN.test(value)).toBe(false);
  });
});

describe('write schemas', () => {
  it('agent-side decimals are strings only, API-side accept numbers and store them as strings', () => {
    const row = { item_id: 'A', store_id: 'S1', current_price: 1.5 };
    expect(ProductStoreWrite.safeParse(row).success).toBe(false);
    expect(ProductStoreWriteInput.parse(row).current_price).toBe('1.5');
  });

  it('reports a missing field as type missing with the field in loc', () => {
    expect(errorsOf(ProductStoreWrite, { item_id: 'A', current_price: '1' })).toEqual([
      { loc: ['body', 'store_id'], msg: 'Field required', type: 'missing' },
    ]);
  });

  it('maps length, datetime, decimal and unknown-key problems to the API codes', () => {
    const errors = errorsOf(TransactionWrite, {
      transaction_id: 'x'.repeat(256),
      item_id: 'A',
      transaction_timestamp: '2026-13-01 10:00',
      price: '1,5',
      colour: 'red',
    });
    expect(errors.map((e) => [e.loc.join('.'), e.type])).toEqual(
      expect.arrayContaining([
        ['body.transaction_id', 'string_too_long'],
        ['body.transaction_timestamp', 'datetime_parsing'],
        ['body.price', 'decimal_parsing'],
        ['body.colour', 'extra_forbidden'],
      ]),
    );
  });

  it('competitor prices need the four write fields', () => {
    const types = errorsOf(CompetitorPriceWrite, {}).map((e) => `${String(e.loc[1])}:${e.type}`);
    expect(types.sort()).toEqual([
      'competitor_name:missing',
      'effective_price:missing',
      'observed_at:missing',
      'regular_price:missing',
    ]);
  });

  it('products require item_id and sku and carry custom columns as extra string fields', () => {
    expect(errorsOf(ProductWrite, { product_name: 'x' }).map((e) => e.loc[1])).toEqual(['item_id', 'sku']);
    expect(ProductWrite.parse({ item_id: 'A', sku: 'A', Farbe: 'rot' })).toEqual({ item_id: 'A', sku: 'A', Farbe: 'rot' });
  });

  it('acknowledge takes 1..500 ids', () => {
    expect(AcknowledgeRequest.safeParse({ approval_ids: Array.from({ length: 500 }, (_, i) => i) }).success).toBe(true);
    expect(AcknowledgeRequest.safeParse({ approval_ids: Array.from({ length: 501 }, (_, i) => i) }).success).toBe(false);
    expect(AcknowledgeRequest.safeParse({ approval_ids: [] }).success).toBe(false);
  });

  it('export status allows no additional properties, and reads its values as every other response does', () => {
    const status = {
      export_id: '3f1c2f8e-4c5b-4f7a-9a51-0a6f0f7c1a11',
      job_id: '6d0f4a2b-1c3e-4b5a-8f9e-2a1b3c4d5e6f',
      status: 'cancelled',
      rows_written: 0,
      total_rows: null,
      expires_at: '2026-11-23T00:00:00Z',
    };
    expect(ExportStatus.safeParse(status).success).toBe(true);
    expect(ExportStatus.safeParse({ ...status, extra: 1 }).success).toBe(false);
    // Its values are read as every other response's: a UUID-shaped id of another variant, an offset without colon.
    const otherForms = { ...status, export_id: '3f1c2f8e-4c5b-4f7a-ca51-0a6f0f7c1a11', expires_at: '2026-11-23T00:00:00+0000' };
    expect(ExportStatus.safeParse(otherForms).success).toBe(true);
    expect(ExportStatus.safeParse({ ...status, export_id: 'not-a-uuid' }).success).toBe(false);
  });
});

describe('business keys (shared by the agent and the sandbox)', () => {
  it('keys a competitor observation by its instant, whatever offset wrote it', () => {
    const row = { competitor_name: 'Shop', item_id: 'A-1', observed_at: '2026-11-20T10:00:00Z' };
    const same = { ...row, observed_at: '2026-11-20T11:00:00+01:00' };
    const later = { ...row, observed_at: '2026-11-20T10:00:01Z' };
    expect(BUSINESS_KEYS.competitor_prices(same)).toBe(BUSINESS_KEYS.competitor_prices(row));
    expect(BUSINESS_KEYS.competitor_prices(later)).not.toBe(BUSINESS_KEYS.competitor_prices(row));
  });

  it('keys an absent optional key field like an empty one, and keeps the parts of a key apart', () => {
    expect(BUSINESS_KEYS.competitor_prices({ competitor_name: 'S', observed_at: 'x', item_id: null })).toBe(
      BUSINESS_KEYS.competitor_prices({ competitor_name: 'S', observed_at: 'x' }),
    );
    expect(BUSINESS_KEYS.product_store({ item_id: 'A', store_id: 'BC' })).not.toBe(BUSINESS_KEYS.product_store({ item_id: 'AB', store_id: 'C' }));
  });

  it('names the key fields of every entity, and each is a field of its write schema', () => {
    const shapes = { products: ProductWrite.shape, product_store: ProductStoreWrite.shape, transactions: TransactionWrite.shape, competitor_prices: CompetitorPriceWrite.shape };
    for (const entity of ENTITIES) {
      for (const field of BUSINESS_KEY_FIELDS[entity]) expect(Object.keys(shapes[entity])).toContain(field);
    }
  });
});
