/**
 * A source's reading options compiled once: converters per field, `defaults` turned into API values and
 * validated against the entity's schema. Run it at start-up (the watcher, `check`): a bad default then fails
 * the configuration, not every file of the source.
 *
 * `defaults` are written as the API expects them, not in the file's formats: decimals with a point, dates in
 * ISO 8601, booleans true/false. They are config, not data, so the file's separators do not apply to them.
 */
import type { DeepReadonly } from '../../config/index.ts';
import { toValidationErrors } from '../../api/schemas/index.ts';
import type { Entity } from '../../api/schemas/index.ts';
import type { Encoding, SourceConfig } from '../../config/source-schema.ts';
import { SourceSchema } from '../../config/source-schema.ts';
import {
  CellError,
  booleanConverter,
  decimalConverter,
  integerConverter,
  stringConverter,
} from './convert.ts';
import type { CellValue, Converter } from './convert.ts';
import { checkDateFormats, dateConverter } from './dates.ts';
import { SourceConfigError } from './errors.ts';
import { ENTITY_FIELDS, WRITE_SCHEMAS, acceptsCustomColumns } from './field-kinds.ts';
import type { FieldInfo, FieldKind } from './field-kinds.ts';

/** What reading a file needs from a source. `push --entity` builds one with `entityReadOptions`. */
export type ReadOptions = DeepReadonly<Pick<
  SourceConfig,
  | 'entity'
  | 'encoding'
  | 'delimiter'
  | 'decimal_separator'
  | 'thousands_separator'
  | 'date_format'
  | 'columns'
  | 'defaults'
>>;

/** Options for a file whose headers are the API's field names, in UTF-8 (or with a BOM), any delimiter. */
export function entityReadOptions(entity: Entity): ReadOptions {
  return SourceSchema.parse({ name: 'entity', entity, path: '.' });
}

export interface CompiledSource {
  readonly compiled: true;
  readonly entity: Entity;
  readonly encoding: Encoding;
  readonly delimiter: SourceConfig['delimiter'];
  readonly fields: readonly FieldInfo[];
  /** API field -> source header, as configured. */
  readonly columns: Readonly<Record<string, string>>;
  /** API field -> API value used when the cell is empty or the column absent. */
  readonly defaults: ReadonlyMap<string, CellValue>;
  /** The converter of a canonical field's cells; custom columns use `stringConverter`. */
  converter(field: string): Converter;
}

const API_FORMAT = { decimalSeparator: '.', thousandsSeparator: undefined } as const;

function convertersFor(options: ReadOptions): Record<FieldKind, Converter> {
  const number = { decimalSeparator: options.decimal_separator, thousandsSeparator: options.thousands_separator };
  return {
    string: stringConverter,
    decimal: decimalConverter(number),
    integer: integerConverter(number),
    boolean: booleanConverter,
    date: dateConverter(options.date_format, 'date'),
    datetime: dateConverter(options.date_format, 'datetime'),
  };
}

const API_CONVERTERS: Record<FieldKind, Converter> = {
  string: stringConverter,
  decimal: decimalConverter(API_FORMAT),
  integer: integerConverter(API_FORMAT),
  boolean: booleanConverter,
  date: dateConverter(['iso'], 'date'),
  datetime: dateConverter(['iso'], 'datetime'),
};

function compileDefaults(options: ReadOptions, kinds: ReadonlyMap<string, FieldKind>): Map<string, CellValue> {
  const values: Record<string, CellValue> = {};
  for (const [field, raw] of Object.entries(options.defaults)) {
    const kind = kinds.get(field) ?? 'string';
    if (typeof raw === 'boolean' && kind !== 'boolean') {
      throw new SourceConfigError(`defaults.${field}`, 'must be a string (true/false is for boolean fields)');
    }
    const value = typeof raw === 'boolean' ? raw : API_CONVERTERS[kind](raw.trim());
    if (value instanceof CellError) {
      throw new SourceConfigError(`defaults.${field}`, `${value.message} (write defaults as the API expects them)`);
    }
    values[field] = value;
  }
  const schema = WRITE_SCHEMAS[options.entity].partial();
  const result = schema.safeParse(values, { reportInput: true });
  if (!result.success) {
    const [first] = toValidationErrors(result.error);
    throw new SourceConfigError(`defaults.${first?.loc.join('.') ?? ''}`, first?.msg ?? 'invalid');
  }
  return new Map(Object.entries(values));
}

/** Compiles `options`; throws SourceConfigError for defaults the entity cannot take. */
export function compileSource(options: ReadOptions): CompiledSource {
  checkDateFormats(options.date_format);
  const fields = ENTITY_FIELDS[options.entity];
  const kinds = new Map(fields.map((f) => [f.name, f.kind] as const));
  if (!acceptsCustomColumns(options.entity)) {
    for (const key of [...Object.keys(options.columns), ...Object.keys(options.defaults)]) {
      if (!kinds.has(key)) throw new SourceConfigError(key, `not a ${options.entity} field`);
    }
  }
  const defaults = compileDefaults(options, kinds);
  const byKind = convertersFor(options);
  return {
    compiled: true,
    entity: options.entity,
    encoding: options.encoding,
    delimiter: options.delimiter,
    fields,
    columns: { ...options.columns },
    defaults,
    converter: (field) => byKind[kinds.get(field) ?? 'string'],
  };
}
