import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEFAULT_NULL_VALUES } from '../../src/config/mapping-schema.ts';
import { SourceSchema, refineSourceList, tokenizeDateFormat } from '../../src/config/source-schema.ts';
import { globsOverlap, globToRegExp } from '../../src/name-glob.ts';

const base = { name: 'erp', entity: 'product_store', path: '/data/inbox' } as const;

function issues(input: Record<string, unknown>): string[] {
  const result = SourceSchema.safeParse({ ...base, ...input });
  return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}

describe('SourceSchema', () => {
  it('fills every default', () => {
    expect(SourceSchema.parse(base)).toEqual({
      ...base,
      mode: 'bulk',
      format: 'csv',
      pattern: '*.csv',
      encoding: 'utf-8',
      delimiter: 'auto',
      decimal_separator: '.',
      header_rows: 1,
      number_format: {},
      workbook_limits: {
        max_unpacked_bytes: 1073741824,
        max_compression_ratio: 100,
        max_shared_strings: 5000000,
        max_shared_strings_bytes: 268435456,
        max_cells: 50000000,
      },
      date_format: ['iso'],
      columns: {},
      maps: {},
      defaults: {},
      null_values: [...DEFAULT_NULL_VALUES],
      ignore_columns: [],
      fill_down: [],
      duplicate_keys: 'last',
      reject_threshold: 1,
      product_level: false,
      batch_size: 1000,
      stable_ms: 5000,
      poll: false,
      poll_interval_ms: 2000,
      done_marker: '.done',
      snapshot: false,
      missing: 'report',
      brakes: { max_changed_share: 0.5, max_missing_share: 0.05, max_price_change_pct: 500 },
    });
  });

  /** What the schema makes of the ways a person writes a delimiter or an encoding. */
  const spellings = {
    delimiter: { tab: '\t', '\t': '\t', '\\t': '\t', ';': ';', Semicolon: ';', '|': '|' },
    encoding: { 'UTF-8': 'utf-8', utf8: 'utf-8', cp1252: 'windows-1252', latin1: 'iso-8859-1', 'UTF-16LE': 'utf-16le' },
  } as const;
  const written = Object.entries(spellings).flatMap(([key, meaning]) => Object.entries(meaning).map(([input, expected]) => [key, input, expected] as const));

  it.each(written)('accepts %s %j', (key, input, expected) => {
    expect(SourceSchema.parse({ ...base, [key]: input })[key as keyof typeof spellings]).toBe(expected);
  });

  it('a workbook source: its sheet by name or position, every Excel name by default; sheet: only for workbooks', () => {
    expect(SourceSchema.parse({ ...base, format: 'xlsx' })).toMatchObject({ format: 'xlsx', pattern: '*.xls*' });
    expect(SourceSchema.parse({ ...base, format: 'xlsx', sheet: 'Preise', pattern: 'preise_*.xlsx' })).toMatchObject({ sheet: 'Preise', pattern: 'preise_*.xlsx' });
    expect(SourceSchema.parse({ ...base, format: 'xlsx', sheet: 2 }).sheet).toBe(2);
    expect(issues({ format: 'xlsx', sheet: 0 })).toEqual(['sheet: positions start at 1 (the first tab)']);
    expect(issues({ sheet: 'Preise' })).toEqual(['sheet: is for format: xlsx sources (a CSV file has no sheets)']);
    expect(issues({ format: 'ods' })).toEqual(['format: csv or xlsx']);
  });

  it('normalises one date format to a list', () => {
    expect(SourceSchema.parse({ ...base, date_format: 'DD.MM.YYYY' }).date_format).toEqual(['DD.MM.YYYY']);
  });

  it('refuses typos, unknown keys and out-of-range values', () => {
    expect(issues({ encodng: 'utf-8' })).toEqual([expect.stringContaining('encodng')]);
    expect(issues({ encoding: 'ebcdic' })).toHaveLength(1);
    expect(issues({ delimiter: ':' })).toHaveLength(1);
    expect(issues({ batch_size: 0 })).toHaveLength(1);
    expect(issues({ batch_size: 10_001 })).toHaveLength(1);
    expect(issues({ mode: 'stream' })).toHaveLength(1);
    expect(issues({ done_marker: 'done' })).toHaveLength(1);
    expect(issues({ pattern: 'sub/*.csv' })).toHaveLength(1);
    expect(issues({ name: 'has space' })).toHaveLength(1);
  });

  it('accepts done_marker false and a custom suffix', () => {
    expect(SourceSchema.parse({ ...base, done_marker: false }).done_marker).toBe(false);
    expect(SourceSchema.parse({ ...base, done_marker: '.ok' }).done_marker).toBe('.ok');
  });

  it('refuses equal decimal and thousands separators', () => {
    expect(issues({ decimal_separator: ',', thousands_separator: ',' })).toEqual([
      'thousands_separator: must differ from decimal_separator',
    ]);
    expect(issues({ decimal_separator: ',', thousands_separator: '.' })).toEqual([]);
    expect(SourceSchema.parse({ ...base, thousands_separator: 'space' }).thousands_separator).toBe(' ');
  });

  it('checks columns and defaults keys against the entity, except for products', () => {
    expect(issues({ columns: { price: 'Preis' } })).toEqual([expect.stringMatching(/^columns\.price: price is not/)]);
    expect(issues({ defaults: { store: 'S1' } })).toHaveLength(1);
    expect(issues({ columns: { current_price: 'Preis' }, defaults: { currency: 'EUR' } })).toEqual([]);
    expect(issues({ entity: 'products', columns: { farbe: 'Farbe' } })).toEqual([]);
  });

  it('refuses numbers as defaults (YAML would have dropped leading zeros)', () => {
    expect(issues({ defaults: { store_id: 12 } })).toHaveLength(1);
    expect(issues({ defaults: { store_id: '0012' } })).toEqual([]);
  });

  it('validates date formats and refuses lists where day and month could swap', () => {
    expect(issues({ date_format: ['DD.MM.YYYY', 'YYYY-MM-DD', 'DD.MM.YYYY HH:mm', 'YYYYMMDD', 'iso'] })).toEqual([]);
    expect(issues({ date_format: ['YY-MM-DD', 'M/D/YY H:mm'] })).toEqual([]);
    expect(issues({ date_format: 'YYYY-MM-DD YY' })).toHaveLength(1);
    expect(issues({ date_format: ['DD/MM/YYYY', 'MM/DD/YYYY'] })).toEqual([expect.stringContaining('ambiguous')]);
    expect(issues({ date_format: ['D/M/YYYY', 'MM/DD/YYYY'] })).toEqual([expect.stringContaining('ambiguous')]);
    expect(issues({ date_format: ['DD.MM.YYYY', 'D.M.YYYY'] })).toEqual([]);
    expect(issues({ date_format: [] })).toHaveLength(1);
  });
});

describe('tokenizeDateFormat', () => {
  it('splits tokens and literals', () => {
    expect(tokenizeDateFormat('DD.MM.YYYY HH:mm')).toEqual([
      { token: 'DD' },
      { literal: '.' },
      { token: 'MM' },
      { literal: '.' },
      { token: 'YYYY' },
      { literal: ' ' },
      { token: 'HH' },
      { literal: ':' },
      { token: 'mm' },
    ]);
  });

  it.each(['YYYY-MM', 'DD.MM.Y', 'YYYY-MM-DD HH', 'YYYY-MM-DD ss', 'YYYY-MM-DD-DD', 'YYYY-MM-DDQ', '2026-MM-DD'])(
    'refuses %j',
    (format) => {
      expect(typeof tokenizeDateFormat(format)).toBe('string');
    },
  );
});

describe('refineSourceList', () => {
  const list = z.array(SourceSchema).superRefine(refineSourceList);

  it('refuses duplicate names and two sources on one folder whose patterns can take the same name', () => {
    const result = list.safeParse([
      { ...base }, // *.csv
      { ...base, path: '/data/other' },
      { ...base, name: 'erp2' },
      { ...base, name: 'erp3', pattern: 'prices_*.csv' }, // prices_1.csv: both would claim it
      { ...base, name: 'erp4', pattern: '*.CSV' }, // names match regardless of case
      { ...base, name: 'erp5', pattern: '*.xlsx' },
    ]);
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join('.'))).toEqual(['1.name', '2.path', '3.path', '4.path']);
    expect(result.error?.issues[2]?.message).toBe(
      'sources[0] already watches this folder with pattern *.csv, which takes names prices_*.csv takes too: give each source a folder of its own, or patterns no name matches both',
    );
  });
});

describe('globsOverlap', () => {
  // With a name both take (as the inbox matches names: globToRegExp), or null when no name can match both.
  it.each([
    ['*.csv', '*.CSV', 'export.CSV'],
    ['*.csv', 'prices_*.csv', 'prices_1.csv'],
    ['prices_*.csv', '*_2026.csv', 'prices_2026.csv'],
    ['a?c', 'ABC', 'abc'],
    ['*a*', '*b*', 'ab'],
    ['*', 'x', 'x'],
    ['x?', '*y', 'xy'],
    ['*.csv', '*.xlsx', null],
    ['prices_*.csv', 'stores_*.csv', null],
    ['a*b', '*c', null],
    ['?', '??', null],
  ])('%s and %s: both take %s', (a, b, name) => {
    expect(globsOverlap(a, b)).toBe(name !== null);
    expect(globsOverlap(b, a)).toBe(name !== null);
    if (name !== null) expect([globToRegExp(a).test(name), globToRegExp(b).test(name)]).toEqual([true, true]);
  });
});

describe('the mapping language: a mistake in each option, in one sentence', () => {
  it.each([
    ['file_name', { file_name: '^(?<store>\\d{4}' }, 'file_name: is not a regular expression (unterminated group)'],
    ['file_name group', { file_name: '^(?<name>.*)$' }, 'file_name: (?<name>...) is taken: {file.name} is the whole file name; pick another group name'],
    ['template', { columns: { item_id: '{Invoice' } }, 'columns.item_id: a "{" is not closed (write "{{" for a brace)'],
    ['template reference', { columns: { item_id: 'a{}' } }, 'columns.item_id: "{}" names no column'],
    ['file group', { columns: { store_id: '{file.store}' } }, 'columns.store_id: {file.store} is not known: there is no file_name pattern'],
    ['file group name', { file_name: '^(?<x>\\d+)\\.csv$', columns: { store_id: '{file.store}' } }, 'columns.store_id: {file.store} is not known: file_name has no group (?<store>...)'],
    ['column entry', { columns: { item_id: 12 } }, 'columns.item_id: expected a column name, a "{template}" or a list of them'],
    ['fallback list', { columns: { item_id: [] } }, 'columns.item_id: an empty list names no column'],
    ['map value', { maps: { store_id: { '0204': 12 } } }, 'maps.store_id.0204: a map value is text: quote it (YAML reads 0204 as 204)'],
    ['map file', { maps: { store_id: { map_file: '/nonexistent/stores.csv' } } }, 'maps.store_id.map_file: cannot read /nonexistent/stores.csv: no such file'],
    ['empty map', { maps: { store_id: {} } }, 'maps.store_id: maps no code: list codes and their values, or give map_file'],
    ['map field', { maps: { storeid: { a: 'b' } } }, expect.stringMatching(/^maps\.storeid: storeid is not a product_store field/)],
    ['ignored and used', { ignore_columns: ['Preis'], columns: { current_price: 'Preis' } }, 'columns.current_price: uses the column "Preis", which ignore_columns excludes'],
    ['fill_down', { fill_down: [''] }, 'fill_down.0: must name a column'],
    ['skip_rows', { skip_rows: { when_empty: [] } }, 'skip_rows.when_empty: list the columns that are empty on the rows to skip'],
    ['timezone', { timezone: 'Europe/Berlinn' }, 'timezone: is not a time zone: use an IANA name such as Europe/Berlin, or UTC'],
    ['duplicate_keys', { duplicate_keys: 'latest' }, expect.stringMatching(/^duplicate_keys: /)],
    ['duplicate_keys sum', { duplicate_keys: 'sum' }, 'duplicate_keys: sum adds up the quantities of till lines: it is for transactions sources (use last, first or reject)'],
    ['reject_threshold', { reject_threshold: 50 }, expect.stringMatching(/^reject_threshold: /)],
    ['product_level entity', { entity: 'transactions', product_level: true }, 'product_level: is for product_store sources (a price list without stores)'],
    ['product_level store', { product_level: true, columns: { store_id: 'X' } }, 'columns.store_id: a product_level source sends no store_id: remove it, or drop product_level'],
  ])('%s', (_, input, expected) => {
    expect(issues(input)).toEqual([expected]);
  });

  it('duplicate_keys: sum by default for transactions (till lines are events), last for the others; either can be set', () => {
    const parsed = (entity: string, extra: object = {}) => SourceSchema.parse({ name: 's', entity, path: '.', ...extra }).duplicate_keys;
    expect(parsed('transactions')).toBe('sum');
    expect(parsed('transactions', { duplicate_keys: 'last' })).toBe('last');
    expect(parsed('competitor_prices')).toBe('last');
    expect(parsed('products')).toBe('last');
    expect(parsed('product_store', { duplicate_keys: 'reject' })).toBe('reject');
  });

  it('reads a map file (UTF-8, a header, then code and value) and refuses one that maps a code twice', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pa-map-'));
    await writeFile(join(dir, 'ok.csv'), 'code,store\n0204,S-1\n0530,S-2\n');
    await writeFile(join(dir, 'twice.csv'), 'code;store\n0204;S-1\n0204;S-2\n');
    expect(SourceSchema.parse({ ...base, maps: { store_id: { map_file: join(dir, 'ok.csv') } } }).maps['store_id']?.values).toEqual({ '0204': 'S-1', '0530': 'S-2' });
    expect(issues({ maps: { store_id: { map_file: join(dir, 'twice.csv') } } })).toEqual([
      `maps.store_id.map_file: ${join(dir, 'twice.csv')} line 3: the code "0204" is mapped twice, to different values`,
    ]);
  });
});

describe('number_format (issue 28, point 3)', () => {
  it('takes a format per field, each key defaulting to the source', () => {
    const source = SourceSchema.parse({
      name: 'shop', entity: 'product_store', path: '.', decimal_separator: ',',
      number_format: { unit_cost: { decimal_separator: '.' }, regular_price: { thousands_separator: 'space' } },
    });
    expect(source.number_format).toEqual({ unit_cost: { decimal_separator: '.' }, regular_price: { thousands_separator: ' ' } });
  });

  it('refuses a field of another entity and a thousands separator equal to the decimal one', () => {
    const result = SourceSchema.safeParse({
      name: 'shop', entity: 'product_store', path: '.', decimal_separator: ',',
      number_format: { sale_price: { decimal_separator: '.' }, unit_cost: { thousands_separator: ',' } },
    });
    expect(result.success).toBe(false);
    const paths = result.error?.issues.map((i) => i.path.join('.'));
    expect(paths).toContain('number_format.sale_price');
    expect(paths).toContain('number_format.unit_cost.thousands_separator');
  });
});
