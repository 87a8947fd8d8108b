/**
 * The mapping language of a source: how the columns of a real export become API fields. Declarative, small, and
 * checked here, when the config is loaded, so that `config validate` explains a mistake in one sentence with its
 * line (docs/mapping.md teaches it with an example per feature):
 *
 *   file_name: '^(?<store>\d{4})-(?<date>\d{4}-\d{2}-\d{2})\.csv$'   named groups, usable as {file.store}
 *   columns:
 *     item_id: Artikel                        a column of the file
 *     transaction_id: "{InvoiceNo}-{StockCode}"   a template of columns, {file.<group>}, {file.name}, {line}
 *     regular_price: [Price, SpecialPrice]    the first non-empty (each a column or a template)
 *   maps: { store_id: { "0204": <uuid> } }    codes -> values (or { map_file: stores.csv })
 *   null_values, ignore_columns, fill_down, skip_rows, timezone, duplicate_keys, reject_threshold
 *
 * Header names are checked against each file when it is read (src/ingest/read/header.ts): a config does not know
 * its files' headers.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { z } from 'zod';
import type { Entity } from '../api/schemas/index.ts';

/**
 * Cells that mean "empty" when `null_values` is not set: spreadsheet errors and placeholders that are never data
 * (compared without regard to case, after trimming). `-` stands alone: a dash is not a value of any field.
 */
export const DEFAULT_NULL_VALUES = [
  '#N/A',
  'N/A',
  '#NV',
  'NULL',
  '#NULL!',
  'NaN',
  '#VALUE!',
  '#WERT!',
  '#REF!',
  '#BEZUG!',
  '#DIV/0!',
  '#NAME?',
  '#NUM!',
  '#ZAHL!',
  '-',
] as const;

/**
 * What decides a file's key collisions (docs/mapping.md, duplicate-keys.ts): the rows are added up into one (`sum`,
 * transactions only: two till lines of one ticket are two events), the last row wins, the first wins, or every row
 * of a repeated key is rejected.
 */
export const DUPLICATE_KEY_POLICIES = ['sum', 'last', 'first', 'reject'] as const;
export type DuplicateKeyPolicy = (typeof DUPLICATE_KEY_POLICIES)[number];

/**
 * The default of `duplicate_keys`, decided here once: `sum` for transactions (a repeated key is a second line of the
 * same sale, not a correction of the first: dropping one loses a sale), `last` for the others (a later row of a
 * snapshot corrects an earlier one, as it would on the platform).
 */
export function duplicateKeysDefault(entity: Entity): DuplicateKeyPolicy {
  return entity === 'transactions' ? 'sum' : 'last';
}

// Column references ------------------------------------------------------------------------------------------------

/** One piece of a template: literal text, a column's cell, a named group of the file name, the file's name, the line. */
export type TemplatePart =
  | { readonly literal: string }
  | { readonly column: string }
  | { readonly file: string }
  | { readonly line: true };

/** Where a field's value comes from: one column, or a template. */
export type ColumnRef = { readonly kind: 'column'; readonly header: string } | { readonly kind: 'template'; readonly parts: readonly TemplatePart[] };

/**
 * Parses one entry of `columns`: text without `{` names a column; with `{...}` it is a template. In a template,
 * `{Header}` is a column's cell, `{file.<group>}` a named group of `file_name`, `{file.name}` the file's name,
 * `{line}` the row's line number; `{{` and `}}` are literal braces. Returns why it is not valid, as a sentence.
 */
export function parseColumnRef(text: string): ColumnRef | string {
  if (!text.includes('{') && !text.includes('}')) return { kind: 'column', header: text.trim() };
  const parts: TemplatePart[] = [];
  let literal = '';
  for (let i = 0; i < text.length; i++) {
    const chr = text[i] as string;
    if ((chr === '{' || chr === '}') && text[i + 1] === chr) {
      literal += chr;
      i++;
      continue;
    }
    if (chr === '}') return `a "}" without its "{" (write "}}" for a brace)`;
    if (chr !== '{') {
      literal += chr;
      continue;
    }
    const end = text.indexOf('}', i + 1);
    if (end < 0) return `a "{" is not closed (write "{{" for a brace)`;
    const name = text.slice(i + 1, end).trim();
    if (name === '' || name.includes('{')) return `"{${text.slice(i + 1, end)}}" names no column`;
    if (literal !== '') parts.push({ literal });
    literal = '';
    if (name === 'line') parts.push({ line: true });
    else if (name.startsWith('file.')) parts.push({ file: name.slice('file.'.length) });
    else parts.push({ column: name });
    i = end;
  }
  if (literal !== '') parts.push({ literal });
  if (!parts.some((p) => !('literal' in p))) return 'a template without any {reference}';
  return { kind: 'template', parts };
}

/** The `{file.<group>}` names a reference uses (`name` is the file's own name, always there). */
export function fileGroupsOf(ref: ColumnRef): string[] {
  if (ref.kind === 'column') return [];
  return ref.parts.flatMap((p) => ('file' in p && p.file !== 'name' ? [p.file] : []));
}

/** A field's entry in `columns`: a column or template, or a list of them tried in order (the first non-empty). */
export const columnEntry = z
  .union([z.string(), z.array(z.string()).min(1, { error: 'an empty list names no column' }).max(20)], {
    error: 'expected a column name, a "{template}" or a list of them',
  })
  .superRefine((entry, ctx) => {
    const list = typeof entry === 'string' ? [entry] : entry;
    list.forEach((text, index) => {
      const path = typeof entry === 'string' ? [] : [index];
      if (text.trim() === '') {
        ctx.addIssue({ code: 'custom', path, message: 'must name a column' });
        return;
      }
      const parsed = parseColumnRef(text);
      if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', path, message: parsed });
    });
  });
export type ColumnEntry = z.output<typeof columnEntry>;

/** The references of an entry, in order (after validation every one parses). */
export function refsOf(entry: ColumnEntry): ColumnRef[] {
  return (typeof entry === 'string' ? [entry] : entry).map((text) => {
    const parsed = parseColumnRef(text);
    if (typeof parsed === 'string') throw new Error(`unchecked column entry ${JSON.stringify(text)}: ${parsed}`);
    return parsed;
  });
}

// file_name -----------------------------------------------------------------------------------------------------------

/** The named groups of a `file_name` pattern, or why it is not a pattern. */
export function fileNameGroups(pattern: string): string[] | string {
  let regex: RegExp;
  try {
    regex = new RegExp(pattern);
  } catch (error) {
    // V8: "Invalid regular expression: /<pattern>/: Unterminated group": the reason is after the pattern.
    const reason = (error as Error).message.split(': ').at(-1) ?? 'invalid';
    return `is not a regular expression (${reason.toLowerCase()})`;
  }
  const groups = [...regex.source.matchAll(/\(\?<([A-Za-z_$][\w$]*)>/g)].map((m) => m[1] as string);
  return groups;
}

export const fileNameSchema = z.string().min(1).superRefine((pattern, ctx) => {
  const groups = fileNameGroups(pattern);
  if (typeof groups === 'string') ctx.addIssue({ code: 'custom', message: groups });
  else if (groups.includes('name')) ctx.addIssue({ code: 'custom', message: '(?<name>...) is taken: {file.name} is the whole file name; pick another group name' });
});

// maps ------------------------------------------------------------------------------------------------------------

/**
 * Reads a map file: CSV (comma, semicolon or tab), UTF-8, a header line, then one line per code: the code as the
 * files write it, and the value to send. Throws a one-sentence Error naming the line of a problem.
 */
export function readMapFile(path: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'it is a folder' : (code ?? 'unreadable');
    throw new Error(`cannot read ${path}: ${why}`, { cause: error });
  }
  const first = text.replace(/^\uFEFF/, '').split(/\r?\n/, 1)[0] ?? '';
  const delimiter = [';', '\t', ','].find((d) => first.includes(d)) ?? ',';
  let records: string[][];
  try {
    records = parse(text, { bom: true, delimiter, relax_column_count: true, skip_empty_lines: true, trim: true });
  } catch (error) {
    throw new Error(`${path} is not a readable CSV file: ${(error as Error).message}`, { cause: error });
  }
  const values: Record<string, string> = {};
  records.slice(1).forEach((record, index) => {
    const line = index + 2;
    if (record.length !== 2 || record[0] === '' || record[1] === '') {
      throw new Error(`${path} line ${line}: expected two cells, the code and the value to send`);
    }
    const [code, value] = record as [string, string];
    if (values[code] !== undefined && values[code] !== value) throw new Error(`${path} line ${line}: the code ${JSON.stringify(code)} is mapped twice, to different values`);
    values[code] = value;
  });
  if (Object.keys(values).length === 0) throw new Error(`${path} maps no code (a header line, then one line per code)`);
  return values;
}

/**
 * `maps.<field>`: inline codes -> values, or `{ map_file: path }` read when the config is loaded. A mapping whose
 * only key is `map_file` is the file form (so no code can be called map_file).
 */
export function mapEntry(path: z.ZodType<string, string>) {
  return z.unknown().transform((value, ctx): MapEntry => {
    const fail = (message: string, at: PropertyKey[] = []) => {
      ctx.addIssue({ code: 'custom', path: at, message });
      return z.NEVER;
    };
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      return fail('expected codes and their values ("0204": <store id>), or map_file: <a CSV file>');
    }
    const entries = Object.entries(value);
    if (entries.length === 1 && entries[0]?.[0] === 'map_file') {
      const file = path.safeParse(entries[0][1]);
      if (!file.success) return fail('map_file must name a CSV file', ['map_file']);
      try {
        return { map_file: file.data, values: readMapFile(file.data) };
      } catch (error) {
        return fail((error as Error).message, ['map_file']);
      }
    }
    if (entries.length === 0) return fail('maps no code: list codes and their values, or give map_file');
    const values: Record<string, string> = {};
    for (const [code, mapped] of entries) {
      if (typeof mapped !== 'string' || mapped === '') return fail('a map value is text: quote it (YAML reads 0204 as 204)', [code]);
      values[code] = mapped;
    }
    return { map_file: null, values };
  });
}
export type MapEntry = { readonly map_file: string | null; readonly values: Readonly<Record<string, string>> };

// time zone -------------------------------------------------------------------------------------------------------

export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

export const timeZoneSchema = z
  .string()
  .min(1)
  .refine(isTimeZone, { error: 'is not a time zone: use an IANA name such as Europe/Berlin, or UTC' });

// lists of headers ------------------------------------------------------------------------------------------------

export const headerList = z.array(z.string().trim().min(1, { error: 'must name a column' })).max(200);
