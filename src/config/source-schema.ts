/**
 * One entry of `sources:`: a watched inbox folder, the entity its files hold, and how to read them.
 *
 * The key names of issue 4 are fixed (name, entity, path, mode, pattern, encoding, delimiter, decimal_separator,
 * date_format, columns, defaults, batch_size, stable_ms, poll, done_marker). Added, each because a real export
 * needs it: `thousands_separator` (German ERPs write 1.234,56; without it such a value is a reject, never a
 * misread), `poll_interval_ms` (the pace of `poll: true` on SMB/NFS shares), and the mapping language of issue 12
 * (mapping-schema.ts, docs/mapping.md): file_name, templates and fallbacks in `columns`, maps, null_values,
 * ignore_columns, fill_down, skip_rows, timezone, duplicate_keys, reject_threshold, product_level; and the
 * workbooks of issue 16: `format` (csv or xlsx) and `sheet`.
 *
 * A `format: xlsx` source reads each workbook's cells as a CSV export of it would hold them (xlsx-cells.ts): numbers
 * with the source's decimal_separator, date cells as ISO dates (so `iso` is always among its date formats), text as
 * typed (a date typed as text goes through date_format). Its `encoding` and `delimiter` apply only to the rejects
 * CSVs people correct and drop back into its inbox (README, "Fix and drop again").
 *
 * Time zone: the API takes every timestamp as UTC and converts nothing. Without `timezone` a wall-clock time
 * without an offset is sent as that time in UTC (`2026-03-01 10:00` -> `2026-03-01T10:00:00Z`); with it, as the
 * instant that wall-clock time is in that zone. A date without a time is `YYYY-MM-DD` for date fields and midnight
 * (UTC, or in `timezone`) for datetime fields. Times with an offset keep it.
 *
 * What is checked here is what can be checked without a file: key names per entity, date-format syntax and
 * ambiguity, separators, templates, maps, time zones. Whether a `defaults` value is valid for its field is checked
 * by `compileSource` (src/ingest/read/compile-source.ts), which `config validate`, the watcher and `check` run once
 * per source.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import {
  BULK_BATCH_DEFAULT,
  BULK_BATCH_MAX,
  COMPETITOR_PRICE_FIELDS,
  ENTITIES,
  PRODUCT_STORE_FIELDS,
  TRANSACTION_FIELDS,
  type Entity,
} from '../api/schemas/index.ts';
import {
  DEFAULT_NULL_VALUES,
  DUPLICATE_KEY_POLICIES,
  duplicateKeysDefault,
  columnEntry,
  fileGroupsOf,
  fileNameGroups,
  fileNameSchema,
  headerList,
  mapEntry,
  refsOf,
  type ColumnEntry,
  timeZoneSchema,
} from './mapping-schema.ts';
import { deltaDefault, deltaSourceFields } from './delta-schema.ts';
import { pathSchema } from './section-context.ts';
import { workbookLimitsSchema } from './workbook-limits-schema.ts';
import type { SectionContext } from './section-context.ts';
import { globsOverlap } from '../name-glob.ts';

export const ENCODINGS = ['utf-8', 'utf-16le', 'utf-16be', 'windows-1252', 'iso-8859-1'] as const;
export type Encoding = (typeof ENCODINGS)[number];

export const DELIMITERS = ['auto', ',', ';', '\t', '|'] as const;
export type Delimiter = (typeof DELIMITERS)[number];

export const THOUSANDS_SEPARATORS = ['.', ',', ' ', "'"] as const;

export const SOURCE_FORMATS = ['csv', 'xlsx'] as const;
export type SourceFormat = (typeof SOURCE_FORMATS)[number];

/**
 * `pattern` when none is set. A workbook source takes every Excel name (.xlsx, .xlsm, and .xls or .xlsb, which then
 * fail with a reason of their own) rather than leave a file nobody picks up lying in the inbox.
 */
export const DEFAULT_PATTERNS: Readonly<Record<SourceFormat, string>> = { csv: '*.csv', xlsx: '*.xls*' };

/** Spellings people write in YAML for the same encoding or delimiter. */
const ENCODING_ALIASES: Record<string, Encoding> = {
  utf8: 'utf-8',
  utf16le: 'utf-16le',
  utf16be: 'utf-16be',
  cp1252: 'windows-1252',
  win1252: 'windows-1252',
  latin1: 'iso-8859-1',
  'latin-1': 'iso-8859-1',
  iso88591: 'iso-8859-1',
};
const DELIMITER_ALIASES: Record<string, string> = { tab: '\t', '\\t': '\t', comma: ',', semicolon: ';', pipe: '|' };

function alias(table: Record<string, string>) {
  return (value: unknown) => {
    if (typeof value !== 'string') return value;
    // A tab (or space) is a value of its own: trimmed it would vanish.
    const key = value.trim() === '' ? value : value.trim().toLowerCase();
    return table[key] ?? key;
  };
}

/**
 * The tokens of a date format: YYYY, two-digit YY MM DD HH mm ss, and D M H for one or two digits. A two-digit year
 * is 2000-2068 for 00-68 and 1969-1999 for 69-99 (the POSIX rule of strptime's %y).
 */
export type DateToken = 'YYYY' | 'YY' | 'MM' | 'DD' | 'HH' | 'mm' | 'ss' | 'M' | 'D' | 'H';
export type DateFormatPart = { token: DateToken } | { literal: string };

/**
 * Splits a `date_format` entry into tokens and literals, or returns why it is not a format. `iso` is handled by
 * the caller. Letters other than the tokens are errors (a `YY` is a typo, not a literal), except `T` and `Z`.
 */
export function tokenizeDateFormat(format: string): DateFormatPart[] | string {
  const parts: DateFormatPart[] = [];
  const tokens = /^(YYYY|YY|MM|DD|HH|mm|ss|M|D|H)/;
  let rest = format;
  while (rest.length > 0) {
    const match = tokens.exec(rest);
    if (match?.[1] !== undefined) {
      parts.push({ token: match[1] as DateToken });
      rest = rest.slice(match[1].length);
      continue;
    }
    const chr = rest[0] ?? '';
    if (/[A-Za-z]/.test(chr) && chr !== 'T' && chr !== 'Z') {
      return `unknown token at "${rest}" (tokens: YYYY YY MM DD HH mm ss, D M H for 1-2 digits, or the word iso)`;
    }
    if (/\d/.test(chr)) return `digits are not allowed in a format ("${format}")`;
    parts.push({ literal: chr });
    rest = rest.slice(1);
  }
  const has = (...names: DateToken[]) => parts.some((p) => 'token' in p && names.includes(p.token));
  const count = (names: DateToken[]) => parts.filter((p) => 'token' in p && names.includes(p.token)).length;
  if (!has('YYYY', 'YY') || !has('MM', 'M') || !has('DD', 'D')) return `"${format}" needs YYYY (or YY), MM (or M) and DD (or D)`;
  if ([['YYYY', 'YY'], ['MM', 'M'], ['DD', 'D'], ['HH', 'H'], ['mm'], ['ss']].some((g) => count(g as DateToken[]) > 1)) {
    return `"${format}" repeats a token`;
  }
  if (has('mm') !== has('HH', 'H')) return `"${format}" needs both an hour (HH) and minutes (mm), or neither`;
  if (has('ss') && !has('mm')) return `"${format}" has seconds (ss) without minutes (mm)`;
  return parts;
}

const dateFormatList = z
  .union([z.string(), z.array(z.string()).min(1)])
  .default('iso')
  .transform((value) => (typeof value === 'string' ? [value] : value))
  .superRefine((formats, ctx) => {
    const shapes = new Map<string, { format: string; dayFirst: boolean }>();
    formats.forEach((format, index) => {
      if (format === 'iso') return;
      const parts = tokenizeDateFormat(format);
      if (typeof parts === 'string') {
        ctx.addIssue({ code: 'custom', path: formats.length > 1 ? [index] : [], message: parts });
        return;
      }
      // DD.MM.YYYY and MM.DD.YYYY both match 01.02.2026: with both listed, the order would silently decide.
      const shape = format.replace(/DD|MM|D|M/g, '#');
      const dayFirst = format.search(/D/) < format.search(/M(?!m)/);
      const other = shapes.get(shape);
      if (other !== undefined && other.dayFirst !== dayFirst) {
        ctx.addIssue({ code: 'custom', message: `"${other.format}" and "${format}" are ambiguous (day and month swapped)` });
      }
      shapes.set(shape, { format, dayFirst });
    });
  });

/** The API fields a non-products entity accepts in `columns` and `defaults` keys. */
const ENTITY_FIELDS: Record<Exclude<Entity, 'products'>, readonly string[]> = {
  product_store: PRODUCT_STORE_FIELDS,
  transactions: TRANSACTION_FIELDS,
  competitor_prices: COMPETITOR_PRICE_FIELDS,
};

function buildSourceSchema(path: z.ZodType<string, string>, mapFile: z.ZodType<string, string>) {
  return z
    .strictObject({
      /** Unique among sources; used in logs, reports and `push --source NAME`. */
      name: z
        .string()
        .max(64)
        .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, { error: 'letters, digits, _ . - only, starting with a letter or digit' }),
      entity: z.enum(ENTITIES),
      /** The inbox folder. */
      path,
      /** bulk: JSON batches; import: one canonical CSV uploaded as an import job. */
      mode: z.enum(['bulk', 'import']).default('bulk'),
      /** csv: delimited text; xlsx: Excel workbooks (.xlsx, .xlsm), one sheet each (`sheet`). */
      format: z.enum(SOURCE_FORMATS, { error: 'csv or xlsx' }).default('csv'),
      /** xlsx: the sheet to read, by name or by its position in the tabs (1 = the first); default the first. */
      sheet: z
        .union([z.string().trim().min(1), z.int()], { error: 'a sheet name, or its position in the tabs (1 = the first)' })
        .refine((v) => typeof v === 'string' || v >= 1, { error: 'positions start at 1 (the first tab)' })
        .optional(),
      /** xlsx: bounds on what one workbook may unpack and hold (workbook-limits-schema.ts); over one the file fails. */
      workbook_limits: workbookLimitsSchema,
      /** Glob matched against file names in `path` (not subfolders); default by format (DEFAULT_PATTERNS). */
      pattern: z
        .string()
        .min(1)
        .refine((p) => !/[/\\]/.test(p), { error: 'a file-name pattern, without / or \\' })
        .optional(),
      /** A byte-order mark in the file wins over this (and is reported as a warning when they differ). */
      encoding: z.preprocess(alias(ENCODING_ALIASES), z.enum(ENCODINGS)).default('utf-8'),
      /** `auto` detects , ; tab | from the header line. Tab may be written tab or "\t". */
      delimiter: z.preprocess(alias(DELIMITER_ALIASES), z.enum(DELIMITERS)).default('auto'),
      /**
       * The line (a workbook: the row) the header starts on, for files with a letterhead above the table. Default:
       * line 1, or the first of the first 50 lines that names a column the mapping reads (header-rows.ts).
       */
      header_row: z.int().min(1).max(1_000_000).optional(),
      /** Rows the header spans; their cells are joined column by column with a space. */
      header_rows: z.int().min(1).max(5).default(1),
      /** For decimal fields (prices, quantities, rates); a comma becomes a point before sending. */
      decimal_separator: z.enum(['.', ',']).default('.'),
      /** Removed from decimal and integer fields when the digit groups are well formed. Default: none allowed. */
      thousands_separator: z.preprocess(alias({ space: ' ' }), z.enum(THOUSANDS_SEPARATORS)).optional(),
      /**
       * API field -> how its column writes numbers, where it differs from the source's decimal_separator and
       * thousands_separator (the default of each key): one file with a decimal point in one column and a comma in
       * another. Decimal and integer fields only.
       */
      number_format: z
        .record(
          z.string().min(1),
          z.strictObject({
            decimal_separator: z.enum(['.', ',']).optional(),
            thousands_separator: z.preprocess(alias({ space: ' ' }), z.enum(THOUSANDS_SEPARATORS)).optional(),
          }),
        )
        .default({}),
      /** One format or a list tried in order; `iso` (the default) takes ISO 8601 dates and datetimes. */
      date_format: dateFormatList,
      /**
       * Named groups of this pattern, matched against the file's name, are usable in templates as {file.<group>}.
       * A file whose name does not match fails.
       */
      file_name: fileNameSchema.optional(),
      /**
       * API field -> a column, a "{template}", or a list tried in order (the first non-empty). Fields not named are
       * taken from a column of their own name, if the mapping does not use that column.
       */
      columns: z.record(z.string().min(1), columnEntry).default({}),
      /** API field -> codes as the files write them -> values to send; or { map_file: a CSV of code,value }. */
      maps: z.record(z.string().min(1), mapEntry(mapFile)).default({}),
      /** Cells that mean "empty" (compared without case, after trimming). */
      null_values: z.array(z.string()).max(100).default([...DEFAULT_NULL_VALUES]),
      /** Columns never read: neither sent as custom columns nor reported as ignored. */
      ignore_columns: headerList.default([]),
      /** Columns whose empty cells take the value of the row above (continuation rows). */
      fill_down: headerList.default([]),
      /** Rows skipped (counted, not rejected) when every column listed is empty. */
      skip_rows: z.strictObject({ when_empty: headerList.min(1, { error: 'list the columns that are empty on the rows to skip' }) }).optional(),
      /** IANA time zone of wall-clock times without an offset; default UTC. */
      timezone: timeZoneSchema.optional(),
      /**
       * Rows of a file with the same business key: added up into one (sum, transactions only), the last wins, the first
       * wins, or all are rejected. Default by entity (duplicateKeysDefault): sum for transactions, last for the others.
       */
      duplicate_keys: z.enum(DUPLICATE_KEY_POLICIES).optional(),
      /** The file fails when more rows than this share are rejected (and always when rows were rejected and none accepted). */
      reject_threshold: z.number().min(0).max(1).default(1),
      /** product_store only: the rows carry no store; each is the item's product-level record. */
      product_level: z.boolean().default(false),
      /** API field -> value used when the cell is empty or the column absent; written as the API expects it. */
      defaults: z
        .record(
          z.string().min(1),
          z.union([z.string(), z.boolean()], {
            error: 'a string or true/false (quote numbers: YAML reads 0012 as 12)',
          }),
        )
        .default({}),
      /** Rows per bulk request. */
      batch_size: z.int().min(1).max(BULK_BATCH_MAX).default(BULK_BATCH_DEFAULT),
      /** A file is complete when size and mtime stayed unchanged this long (ms). 0 only with done markers. */
      stable_ms: z.int().min(0).max(86_400_000).default(5_000), // 5 s
      /** Poll the folder instead of waiting for change events: required on SMB/NFS shares. */
      poll: z.boolean().default(false),
      /** Polling interval (ms) when `poll` is true. */
      poll_interval_ms: z.int().min(100).max(3_600_000).default(2_000), // 2 s
      /** `name.csv` + this suffix marks `name.csv` complete at once; false disables markers. */
      done_marker: z
        .union([z.literal(false), z.string().regex(/^\.[^/\\]+$/, { error: 'a suffix such as .done, or false' })])
        .default('.done'),
      ...deltaSourceFields,
    })
    .superRefine((source, ctx) => {
      if (source.delta?.enabled === true && source.mode === 'import') {
        ctx.addIssue({ code: 'custom', path: ['delta'], message: 'delta needs mode: bulk (the ids and results of single rows come from bulk answers)' });
      }
      if (source.snapshot && (!(source.delta?.enabled ?? deltaDefault(source.entity)) || source.mode === 'import')) {
        ctx.addIssue({ code: 'custom', path: ['snapshot'], message: 'a snapshot needs delta (the agent remembers keys only for delta sources)' });
      }
      if (source.duplicate_keys === 'sum' && source.entity !== 'transactions') {
        ctx.addIssue({ code: 'custom', path: ['duplicate_keys'], message: 'sum adds up the quantities of till lines: it is for transactions sources (use last, first or reject)' });
      }
      if (source.missing === 'delete' && !source.snapshot) {
        ctx.addIssue({ code: 'custom', path: ['missing'], message: 'missing: delete needs snapshot: true (only a full export says which keys are gone)' });
      }
      if (source.sheet !== undefined && source.format !== 'xlsx') {
        ctx.addIssue({ code: 'custom', path: ['sheet'], message: 'is for format: xlsx sources (a CSV file has no sheets)' });
      }
      if (source.thousands_separator === source.decimal_separator) {
        ctx.addIssue({
          code: 'custom',
          path: ['thousands_separator'],
          message: 'must differ from decimal_separator',
        });
      }
      for (const [field, format] of Object.entries(source.number_format)) {
        const decimal = format.decimal_separator ?? source.decimal_separator;
        if ((format.thousands_separator ?? source.thousands_separator) !== decimal) continue;
        ctx.addIssue({
          code: 'custom',
          path: ['number_format', field, format.thousands_separator === undefined ? 'decimal_separator' : 'thousands_separator'],
          message: `the thousands separator must differ from the decimal separator ("${decimal}")`,
        });
      }
      // Products accept any key: one that is not a canonical field names a custom column, as in a CSV import.
      if (source.entity === 'products') return;
      const allowed = ENTITY_FIELDS[source.entity];
      for (const key of ['columns', 'defaults', 'maps', 'number_format'] as const) {
        for (const field of Object.keys(source[key])) {
          if (allowed.includes(field)) continue;
          ctx.addIssue({
            code: 'custom',
            path: [key, field],
            message: `${field} is not a ${source.entity} field (fields: ${allowed.join(', ')})`,
          });
        }
      }
    })
    // Run even when other keys have problems, so that config validate lists them all at once.
    .superRefine((source, ctx) => refineMapping(source, ctx), { when: () => true })
    .transform((source) => ({
      ...source,
      pattern: source.pattern ?? DEFAULT_PATTERNS[source.format],
      duplicate_keys: source.duplicate_keys ?? duplicateKeysDefault(source.entity),
    }));
}

type MappingInput = Pick<
  SourceConfigShape,
  'entity' | 'file_name' | 'columns' | 'defaults' | 'maps' | 'ignore_columns' | 'fill_down' | 'skip_rows' | 'product_level'
>;
interface SourceConfigShape {
  entity: Entity;
  file_name?: string | undefined;
  columns: Record<string, string | string[]>;
  defaults: Record<string, string | boolean>;
  maps: Record<string, unknown>;
  ignore_columns: string[];
  fill_down: string[];
  skip_rows?: { when_empty: string[] } | undefined;
  product_level: boolean;
}

const listOf = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);
const recordOf = (value: unknown): Record<string, unknown> => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {});

/**
 * Checks between the mapping options: each problem as one sentence on the key it concerns. Runs also when other keys
 * have problems (their values may then be as written, so every shape is checked before use).
 */
function refineMapping(source: MappingInput, ctx: z.RefinementCtx): void {
  const groups = typeof source.file_name === 'string' ? fileNameGroups(source.file_name) : [];
  const ignored = new Set(listOf(source.ignore_columns));
  for (const [field, entry] of Object.entries(recordOf(source.columns))) {
    let refs;
    try {
      refs = refsOf(entry as ColumnEntry);
    } catch {
      continue; // reported by columnEntry
    }
    for (const ref of refs) {
      for (const group of fileGroupsOf(ref)) {
        if (typeof groups !== 'string' && groups.includes(group)) continue;
        const why = source.file_name === undefined ? 'there is no file_name pattern' : `file_name has no group (?<${group}>...)`;
        ctx.addIssue({ code: 'custom', path: ['columns', field], message: `{file.${group}} is not known: ${why}` });
      }
      const columns = ref.kind === 'column' ? [ref.header] : ref.parts.flatMap((p) => ('column' in p ? [p.column] : []));
      for (const column of columns) {
        if (ignored.has(column)) {
          ctx.addIssue({ code: 'custom', path: ['columns', field], message: `uses the column ${JSON.stringify(column)}, which ignore_columns excludes` });
        }
      }
    }
  }
  for (const key of ['fill_down', 'skip_rows'] as const) {
    const list = key === 'skip_rows' ? listOf(recordOf(source.skip_rows)['when_empty']) : listOf(source.fill_down);
    for (const column of list) {
      if (!ignored.has(column)) continue;
      const path = key === 'skip_rows' ? ['skip_rows', 'when_empty'] : [key];
      ctx.addIssue({ code: 'custom', path, message: `names the column ${JSON.stringify(column)}, which ignore_columns excludes` });
    }
  }
  if (source.product_level) {
    if (source.entity !== 'product_store') {
      ctx.addIssue({ code: 'custom', path: ['product_level'], message: 'is for product_store sources (a price list without stores)' });
    }
    for (const key of ['columns', 'defaults', 'maps'] as const) {
      if (Object.hasOwn(recordOf(source[key]), 'store_id')) {
        ctx.addIssue({ code: 'custom', path: [key, 'store_id'], message: 'a product_level source sends no store_id: remove it, or drop product_level' });
      }
    }
  }
}

/** A source with `path` (and map files) kept as written; for tests and `push --entity`. */
export const SourceSchema = buildSourceSchema(z.string().min(1), z.string().min(1));

/** A source inside the config file: `path` and map files are resolved against the config file's directory. */
export function sourceSchema(ctx: SectionContext) {
  return buildSourceSchema(pathSchema(ctx), pathSchema(ctx));
}

export type SourceConfig = z.output<typeof SourceSchema>;
export type SourceInput = z.input<typeof SourceSchema>;

/**
 * Checks a whole `sources:` list: names are unique, and no two sources watch the same folder with patterns that can
 * take the same file name (`*.csv` and `*.CSV`, `*.csv` and `prices-*.csv`): such a file would be claimed by both,
 * and sent as the wrong entity by one. Use as `z.array(sourceSchema(ctx)).superRefine(refineSourceList)`.
 */
export function refineSourceList(sources: readonly SourceConfig[], ctx: z.RefinementCtx): void {
  const names = new Map<string, number>();
  sources.forEach((source, index) => {
    const sameName = names.get(source.name);
    if (sameName !== undefined) {
      ctx.addIssue({ code: 'custom', path: [index, 'name'], message: `duplicate name (also sources[${sameName}])` });
    } else names.set(source.name, index);
    const earlier = sources.findIndex((other, at) => at < index && resolve(other.path) === resolve(source.path) && globsOverlap(other.pattern, source.pattern));
    if (earlier !== -1) {
      const theirs = sources[earlier]?.pattern ?? '';
      ctx.addIssue({
        code: 'custom',
        path: [index, 'path'],
        message: `sources[${earlier}] already watches this folder with pattern ${theirs}, which takes names ${source.pattern} takes too: give each source a folder of its own, or patterns no name matches both`,
      });
    }
  });
}

/** `sources:` as the config file holds it. */
export function sourceListSchema(ctx: SectionContext) {
  return z.array(sourceSchema(ctx)).default([]).superRefine(refineSourceList);
}
