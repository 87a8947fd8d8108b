import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SourceSchema, refineSourceList, tokenizeDateFormat } from '../../src/config/source-schema.ts';

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
      pattern: '*.csv',
      encoding: 'utf-8',
      delimiter: 'auto',
      decimal_separator: '.',
      date_format: ['iso'],
      columns: {},
      defaults: {},
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

  it.each([
    ['tab', '\t'],
    ['\t', '\t'],
    ['\\t', '\t'],
    [';', ';'],
    ['Semicolon', ';'],
    ['|', '|'],
  ])('accepts delimiter %j', (input, expected) => {
    expect(SourceSchema.parse({ ...base, delimiter: input }).delimiter).toBe(expected);
  });

  it.each([
    ['UTF-8', 'utf-8'],
    ['utf8', 'utf-8'],
    ['cp1252', 'windows-1252'],
    ['latin1', 'iso-8859-1'],
    ['UTF-16LE', 'utf-16le'],
  ])('accepts encoding %j', (input, expected) => {
    expect(SourceSchema.parse({ ...base, encoding: input }).encoding).toBe(expected);
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
    expect(issues({ date_format: 'YY-MM-DD' })).toHaveLength(1);
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

  it.each(['YYYY-MM', 'DD.MM.YY', 'YYYY-MM-DD HH', 'YYYY-MM-DD ss', 'YYYY-MM-DD-DD', 'YYYY-MM-DDQ', '2026-MM-DD'])(
    'refuses %j',
    (format) => {
      expect(typeof tokenizeDateFormat(format)).toBe('string');
    },
  );
});

describe('refineSourceList', () => {
  const list = z.array(SourceSchema).superRefine(refineSourceList);

  it('refuses duplicate names and two sources on the same folder and pattern', () => {
    const result = list.safeParse([
      { ...base },
      { ...base, path: '/data/other' },
      { ...base, name: 'erp2' },
      { ...base, name: 'erp3', pattern: 'prices_*.csv' },
    ]);
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join('.'))).toEqual(['1.name', '2.path']);
  });
});
