/**
 * A source's reading options compiled once: converters per field, `defaults` turned into API values and
 * validated against the entity's schema. Run it at start-up (the watcher, `check`): a bad default then fails
 * the configuration, not every file of the source.
 *
 * `defaults` are written as the API expects them, not in the file's formats: decimals with a point, dates in
 * ISO 8601, booleans true/false. They are config, not data, so the file's separators do not apply to them.
 */
import type { z } from 'zod';
import type { DeepReadonly } from '../../config/index.ts';
import { ProductLevelWrite, toValidationErrors } from '../../api/schemas/index.ts';
import type { Entity } from '../../api/schemas/index.ts';
import { refsOf, type ColumnEntry, type ColumnRef, type DuplicateKeyPolicy } from '../../config/mapping-schema.ts';
import type { Encoding, SourceConfig, SourceFormat } from '../../config/source-schema.ts';
import { SourceSchema } from '../../config/source-schema.ts';
import {
  CellError,
  booleanConverter,
  decimalConverter,
  integerConverter,
  stringConverter,
} from './convert.ts';
import type { CellValue, Converter, NumberFormat } from './convert.ts';
import { cellCleaner, type CellCleaner } from './clean-cell.ts';
import { checkDateFormats, dateConverter } from './dates.ts';
import { TimeZone } from './time-zone.ts';
import { SourceConfigError } from './errors.ts';
import { ENTITY_FIELDS, WRITE_SCHEMAS, acceptsCustomColumns } from './field-kinds.ts';
import type { FieldInfo, FieldKind } from './field-kinds.ts';
import type { WorkbookLimits } from '../../config/workbook-limits-schema.ts';

/** What reading a file needs from a source. `push --entity` builds one with `entityReadOptions`. */
export type ReadOptions = DeepReadonly<Pick<
  SourceConfig,
  | 'entity'
  | 'format'
  | 'sheet'
  | 'workbook_limits'
  | 'encoding'
  | 'delimiter'
  | 'header_row'
  | 'header_rows'
  | 'decimal_separator'
  | 'thousands_separator'
  | 'number_format'
  | 'date_format'
  | 'file_name'
  | 'columns'
  | 'defaults'
  | 'maps'
  | 'null_values'
  | 'ignore_columns'
  | 'fill_down'
  | 'skip_rows'
  | 'timezone'
  | 'duplicate_keys'
  | 'reject_threshold'
  | 'product_level'
>>;

/** Options for a file whose headers are the API's field names, in UTF-8 (or with a BOM), any delimiter. */
export function entityReadOptions(entity: Entity): ReadOptions {
  return SourceSchema.parse({ name: 'entity', entity, path: '.' });
}

export interface CompiledSource {
  readonly compiled: true;
  /** What it was compiled from (a worker thread compiles it again: delta/two-halves.ts). */
  readonly options: ReadOptions;
  readonly entity: Entity;
  /** How the source's files are read: CSV or workbooks (open-records.ts). */
  readonly format: SourceFormat;
  /** xlsx: the sheet by name or tab position (1 = the first); undefined: the first. */
  readonly sheet: string | number | undefined;
  /** How a workbook's number cells are written out, so that the decimal converter reads them as it reads text. */
  readonly decimalSeparator: '.' | ',';
  /** xlsx: what one workbook may unpack and hold (xlsx-limits.ts). */
  readonly workbookLimits: WorkbookLimits;
  readonly encoding: Encoding;
  readonly delimiter: SourceConfig['delimiter'];
  /** Where the header starts (undefined: line 1, or found: header-rows.ts), and how many rows it spans. */
  readonly headerRow: number | undefined;
  readonly headerRows: number;
  /** The canonical fields rows are mapped to (product_level product_store rows have no store_id). */
  readonly fields: readonly FieldInfo[];
  /** The schema a mapped row is validated with: the entity's write schema (without store_id for product_level). */
  readonly schema: z.ZodType<unknown>;
  /** API field -> where its value comes from, tried in order (parsed `columns`). */
  readonly columns: ReadonlyMap<string, readonly ColumnRef[]>;
  /** API field -> API value used when the cell is empty or the column absent. */
  readonly defaults: ReadonlyMap<string, CellValue>;
  /** API field -> codes as the files write them -> values to send. */
  readonly maps: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /** A cell as the mapping reads it: trimmed, Excel's apostrophe removed, null markers empty. */
  readonly clean: CellCleaner;
  readonly ignoreColumns: ReadonlySet<string>;
  readonly fillDown: readonly string[];
  readonly skipWhenEmpty: readonly string[];
  /** `file_name` compiled; null when the source has none. */
  readonly fileName: RegExp | null;
  /**
   * The file's name is data (`file_name` groups, `{file.name}` in a template): the same bytes under another name are
   * other rows, so the duplicate check compares names too.
   */
  readonly readsFileName: boolean;
  readonly duplicateKeys: DuplicateKeyPolicy;
  readonly rejectThreshold: number;
  readonly productLevel: boolean;
  /** The converter of a canonical field's cells (its `number_format` or the source's); custom columns use `stringConverter`. */
  converter(field: string): Converter;
  /** The decimal separator of a field's column: a workbook's number cells in that column are written with it. */
  decimalSeparatorOf(field: string): '.' | ',';
}

const API_FORMAT = { decimalSeparator: '.', thousandsSeparator: undefined } as const;

/** How a field's column writes numbers: its `number_format`, each key defaulting to the source's. */
function numberFormatOf(options: ReadOptions, field: string | null): NumberFormat {
  const own = field !== null && Object.hasOwn(options.number_format, field) ? options.number_format[field] : undefined;
  return {
    decimalSeparator: own?.decimal_separator ?? options.decimal_separator,
    thousandsSeparator: own?.thousands_separator ?? options.thousands_separator,
  };
}

/** The converters of the fields `number_format` names, checked to be number fields. */
function ownNumberConverters(options: ReadOptions, kinds: ReadonlyMap<string, FieldKind>): Map<string, Converter> {
  const converters = new Map<string, Converter>();
  for (const field of Object.keys(options.number_format)) {
    const kind = kinds.get(field);
    if (kind !== 'decimal' && kind !== 'integer') {
      throw new SourceConfigError(`number_format.${field}`, `${field} is not a number field of ${options.entity} (only decimal and integer fields have a number format)`);
    }
    const format = numberFormatOf(options, field);
    converters.set(field, kind === 'decimal' ? decimalConverter(format) : integerConverter(format));
  }
  return converters;
}

function convertersFor(options: ReadOptions): Record<FieldKind, Converter> {
  const number = numberFormatOf(options, null);
  const zone = options.timezone === undefined ? undefined : new TimeZone(options.timezone);
  return {
    string: stringConverter,
    decimal: decimalConverter(number),
    integer: integerConverter(number),
    boolean: booleanConverter,
    date: dateConverter(options.date_format, 'date'),
    datetime: dateConverter(options.date_format, 'datetime', zone),
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

function compileDefaults(options: ReadOptions, kinds: ReadonlyMap<string, FieldKind>, schema: WriteSchema): Map<string, CellValue> {
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
  const result = schema.partial().safeParse(values, { reportInput: true });
  if (!result.success) {
    const [first] = toValidationErrors(result.error);
    throw new SourceConfigError(`defaults.${first?.loc.join('.') ?? ''}`, first?.msg ?? 'invalid');
  }
  return new Map(Object.entries(values));
}

type WriteSchema = z.ZodObject;

/** The write schema rows of `options` are validated with. */
function writeSchemaOf(options: ReadOptions): WriteSchema {
  // A product-level record is a product_store record without a store (docs/mapping.md, "product-level prices").
  return options.product_level ? ProductLevelWrite : WRITE_SCHEMAS[options.entity];
}

/** Whether a template of `columns` has a `{file.*}` part. */
function templatesReadFileName(columns: ReadonlyMap<string, readonly ColumnRef[]>): boolean {
  return [...columns.values()].some((refs) => refs.some((ref) => ref.kind === 'template' && ref.parts.some((p) => 'file' in p)));
}

/** Compiles `options`; throws SourceConfigError for defaults the entity cannot take. */
export function compileSource(options: ReadOptions): CompiledSource {
  checkDateFormats(options.date_format);
  // A workbook's date cells arrive as ISO dates (xlsx-cells.ts): they must read whatever formats the typed text uses.
  if (options.format === 'xlsx' && !options.date_format.includes('iso')) options = { ...options, date_format: [...options.date_format, 'iso'] };
  const schema = writeSchemaOf(options);
  const fields = ENTITY_FIELDS[options.entity].filter((f) => !(options.product_level && f.name === 'store_id'));
  const kinds = new Map(fields.map((f) => [f.name, f.kind] as const));
  if (!acceptsCustomColumns(options.entity)) {
    for (const key of [...Object.keys(options.columns), ...Object.keys(options.defaults), ...Object.keys(options.maps)]) {
      if (!kinds.has(key)) throw new SourceConfigError(key, `not a ${options.entity} field`);
    }
  }
  const defaults = compileDefaults(options, kinds, schema);
  const byKind = convertersFor(options);
  const ownNumbers = ownNumberConverters(options, kinds);
  const columns = new Map(Object.entries(options.columns).map(([field, entry]) => [field, refsOf(entry as ColumnEntry)]));
  return {
    compiled: true,
    options,
    entity: options.entity,
    format: options.format,
    sheet: options.sheet,
    decimalSeparator: options.decimal_separator,
    workbookLimits: options.workbook_limits,
    encoding: options.encoding,
    delimiter: options.delimiter,
    headerRow: options.header_row,
    headerRows: options.header_rows,
    fields,
    schema,
    columns,
    defaults,
    maps: new Map(Object.entries(options.maps).map(([field, map]) => [field, new Map(Object.entries(map.values))])),
    clean: cellCleaner(options.null_values),
    ignoreColumns: new Set(options.ignore_columns),
    fillDown: [...options.fill_down],
    skipWhenEmpty: [...(options.skip_rows?.when_empty ?? [])],
    fileName: options.file_name === undefined ? null : new RegExp(options.file_name),
    readsFileName: options.file_name !== undefined || templatesReadFileName(columns),
    duplicateKeys: options.duplicate_keys,
    rejectThreshold: options.reject_threshold,
    productLevel: options.product_level,
    converter: (field) => ownNumbers.get(field) ?? byKind[kinds.get(field) ?? 'string'],
    decimalSeparatorOf: (field) => numberFormatOf(options, field).decimalSeparator,
  };
}
