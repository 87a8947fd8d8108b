import { describe, expect, it } from 'vitest';
import { compileSource, entityReadOptions, SourceConfigError } from '../../src/ingest/read/index.ts';
import { drain, source, tempDir, writeTemp } from './support/read-helpers.ts';

const dir = tempDir();

describe('reject kinds', () => {
  it('reports each kind with the API code, the field, its column and the original fields', async () => {
    const long = 'x'.repeat(256);
    const file = writeTemp(
      dir,
      [
        'Beleg;Artikel;Zeit;Menge;Preis;Aktion',
        ';A1;01.03.2026 10:00;1;1,5;ja', // missing transaction_id
        'T2;A2;01.03.2026 10:00;1;1,5x;ja', // bad decimal
        'T3;A3;31.02.2026 10:00;1;1,5;ja', // impossible date
        'T4;A4;2026/03/01;1;1,5;ja', // no format matches
        `${long};A5;01.03.2026 10:00;1;1,5;ja`, // too long
        'T6;A6;01.03.2026 10:00;1;1,5;vielleicht', // bad boolean
        'T7;A7;01.03.2026;2;1,5;0', // accepted: date only is midnight UTC
      ].join('\n'),
    );
    const src = source('transactions', {
      decimal_separator: ',',
      date_format: ['DD.MM.YYYY HH:mm', 'DD.MM.YYYY'],
      columns: {
        transaction_id: 'Beleg',
        item_id: 'Artikel',
        transaction_timestamp: 'Zeit',
        quantity: 'Menge',
        price: 'Preis',
        is_promo: 'Aktion',
      },
    });
    const { rows, rejects, summary } = await drain(file, src);
    expect(rejects.map((r) => [r.line, r.field, r.column, r.code])).toEqual([
      [2, 'transaction_id', 'Beleg', 'missing'],
      [3, 'price', 'Preis', 'decimal_parsing'],
      [4, 'transaction_timestamp', 'Zeit', 'datetime_parsing'],
      [5, 'transaction_timestamp', 'Zeit', 'datetime_parsing'],
      [6, 'transaction_id', 'Beleg', 'string_too_long'],
      [7, 'is_promo', 'Aktion', 'bool_parsing'],
    ]);
    expect(rejects[0]?.rawFields).toEqual(['', 'A1', '01.03.2026 10:00', '1', '1,5', 'ja']);
    expect(rejects[0]?.message).toBe('transaction_id is required: the "Beleg" cell is empty');
    expect(rows.map((r) => r.record)).toEqual([
      {
        transaction_id: 'T7',
        item_id: 'A7',
        transaction_timestamp: '2026-03-01T00:00:00Z',
        quantity: '2',
        price: '1.5',
        is_promo: false,
      },
    ]);
    expect(summary).toMatchObject({ rows: 7, accepted: 1, rejected: 6 });
  });

  it('collects every problem of a row, first by schema order', async () => {
    const file = writeTemp(dir, 'item_id,store_id,current_price,stock_on_hand,price_effective_date\nA,,abc,1.5,2026-13-01\n');
    const { rejects } = await drain(file, source('product_store'));
    expect(rejects[0]?.errors.map((e) => [e.field, e.code])).toEqual([
      ['store_id', 'missing'],
      ['current_price', 'decimal_parsing'],
      ['stock_on_hand', 'int_parsing'],
      ['price_effective_date', 'date_parsing'],
    ]);
    expect(rejects[0]).toMatchObject({ field: 'store_id', code: 'missing' });
  });
});

describe('mapping', () => {
  it('omits empty optional cells, applies defaults to empty cells, trims everything', async () => {
    const file = writeTemp(dir, 'item_id,store_id,current_price,currency,store_name\n  A  , S ,  1.5 ,, \nB,S,2,USD,x\n');
    const { rows } = await drain(file, source('product_store', { defaults: { currency: 'EUR', tax_rate: '0.19' } }));
    expect(rows.map((r) => r.record)).toEqual([
      { item_id: 'A', store_id: 'S', current_price: '1.5', currency: 'EUR', tax_rate: '0.19' },
      { item_id: 'B', store_id: 'S', current_price: '2', currency: 'USD', tax_rate: '0.19', store_name: 'x' },
    ]);
  });

  it('rejects a price written in another currency than the row\'s, or than the row\'s other prices', async () => {
    const file = writeTemp(
      dir,
      'item_id,store_id,current_price,regular_price,currency\nA,S,"12,90 USD",,\nB,S,"12,90 €",,\nC,S,"1,99 €","2,49 $",\nD,S,"1,99 USD","2,49 EUR",\nE,S,"1,99 USD",,USD\n',
    );
    const { rows, rejects } = await drain(file, source('product_store', { decimal_separator: ',', defaults: { currency: 'EUR' } }));
    expect(rows.map((r) => [r.record['item_id'], r.record['current_price'], r.record['currency']])).toEqual([
      ['B', '12.90', 'EUR'],
      ['C', '1.99', 'EUR'], // `$` names several currencies: not checked
      ['E', '1.99', 'USD'],
    ]);
    expect(rejects.map((r) => [r.line, r.errors.map((e) => [e.field, e.code, e.message])])).toEqual([
      [2, [['current_price', 'currency_mismatch', '"12,90 USD" is in USD, but the row\'s currency is EUR']]],
      [5, [['current_price', 'currency_mismatch', '"1,99 USD" is in USD, but the row\'s currency is EUR']]],
    ]);
    // A row's currency written as a symbol that names one currency is that currency.
    const symbol = writeTemp(dir, 'item_id,store_id,current_price,currency\nA,S,"12,90 €",€\nB,S,"12,90 €",$\n');
    expect((await drain(symbol, source('product_store', { decimal_separator: ',' }))).rows.map((r) => r.record['item_id'])).toEqual(['A', 'B']);
    // Without a currency in the row, the prices must agree with each other.
    const own = writeTemp(dir, 'item_id,store_id,current_price,regular_price\nA,S,1.99 USD,2.49 EUR\nB,S,1.99 USD,2.49 USD\n');
    const mixed = await drain(own, source('product_store'));
    expect(mixed.rows.map((r) => r.record['item_id'])).toEqual(['B']);
    expect(mixed.rejects[0]?.errors.map((e) => [e.field, e.code, e.message])).toEqual([['regular_price', 'currency_mismatch', '"2.49 EUR" is in EUR, but "1.99 USD" is in USD']]);
  });

  it('one header may feed two fields', async () => {
    const file = writeTemp(dir, 'Artikel,Name\nA1,Apfel\n');
    const { rows } = await drain(file, source('products', { columns: { item_id: 'Artikel', sku: 'Artikel', product_name: 'Name' } }));
    expect(rows[0]?.record).toEqual({ item_id: 'A1', sku: 'A1', product_name: 'Apfel' });
  });
});

describe('custom columns (products)', () => {
  it('extra columns become custom columns; mapped and default-only ones too; canonical names are not reused', async () => {
    const file = writeTemp(dir, 'Artikel,sku,item_id,Farbe,Material,\nA1,S1,OLD,rot,Holz,\nA2,S2,OLD,,Glas,\n');
    const src = source('products', {
      columns: { item_id: 'Artikel', color: 'Farbe' },
      defaults: { season: 'SS26' },
    });
    const { rows, summary } = await drain(file, src);
    expect(summary.customColumns).toEqual(['color', 'season', 'Material']);
    expect(summary.ignoredColumns).toEqual(['item_id', '(column 6)']);
    expect(rows.map((r) => r.record)).toEqual([
      { item_id: 'A1', sku: 'S1', color: 'rot', season: 'SS26', Material: 'Holz' },
      { item_id: 'A2', sku: 'S2', season: 'SS26', Material: 'Glas' },
    ]);
  });

  it('a custom value over the text limit is a reject', async () => {
    const file = writeTemp(dir, `item_id,sku,note\nA1,S1,${'x'.repeat(1001)}\n`);
    const { rejects } = await drain(file, source('products'));
    expect(rejects[0]).toMatchObject({ field: 'note', code: 'string_too_long' });
  });
});

describe('ignored columns (other entities)', () => {
  it('are reported once per file, not per row', async () => {
    const lines = ['transaction_id,item_id,transaction_timestamp,cashier,till'];
    for (let i = 0; i < 50; i++) lines.push(`T${i},A,2026-03-01T10:00:00Z,Bob,${i}`);
    const { rows, summary } = await drain(writeTemp(dir, lines.join('\n')), source('transactions'));
    expect(rows).toHaveLength(50);
    expect(rows[0]?.record).toEqual({ transaction_id: 'T0', item_id: 'A', transaction_timestamp: '2026-03-01T10:00:00Z' });
    expect(summary.ignoredColumns).toEqual(['cashier', 'till']);
    expect(summary.warnings).toEqual(['columns not sent (not transactions fields): "cashier", "till"']);
  });
});

describe('compileSource', () => {
  it('converts defaults as API values', () => {
    const compiled = compileSource({
      ...entityReadOptions('product_store'),
      decimal_separator: ',',
      defaults: { stock_on_hand: '0', tax_rate: '0.19', price_effective_date: '2026-03-01' },
    });
    expect([...compiled.defaults]).toEqual([
      ['stock_on_hand', 0],
      ['tax_rate', '0.19'],
      ['price_effective_date', '2026-03-01'],
    ]);
  });

  it.each([
    [{ tax_rate: '0,19' }, 'defaults.tax_rate'],
    [{ stock_on_hand: 'many' }, 'defaults.stock_on_hand'],
    [{ store_name: true }, 'defaults.store_name'],
    [{ store_id: 'x'.repeat(256) }, 'defaults.store_id'],
  ])('refuses %j', (defaults, path) => {
    const options = { ...entityReadOptions('product_store'), defaults };
    expect(() => compileSource(options)).toThrow(SourceConfigError);
    expect(() => compileSource(options)).toThrow(path);
  });

  it('takes boolean defaults for boolean fields', () => {
    const compiled = compileSource({ ...entityReadOptions('transactions'), defaults: { is_promo: false } });
    expect(compiled.defaults.get('is_promo')).toBe(false);
  });
});
