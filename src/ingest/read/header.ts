/**
 * The header line against the source's mapping: which column feeds which API field, which columns become
 * product custom columns, which are ignored. Decided once per file, before the first row.
 *
 * Rules:
 * - names are trimmed and matched exactly (case-sensitive); two equal non-empty names fail the file;
 * - an API field is read from `columns[field]`, else from a header named like the field;
 * - `defaults` fill a field whose column is absent or whose cell is empty;
 * - a required field with neither column nor default fails the file (MISSING_COLUMNS): every row would be
 *   rejected for it; a header holding no field at all fails it as NO_KNOWN_COLUMNS;
 * - left-over columns: for products, named ones become custom columns (as the API's CSV import does), except
 *   names of canonical fields taken from another column; everything else (all left-overs of the other
 *   entities, unnamed columns) is ignored and reported in one warning per file.
 */
import type { CellValue, Converter } from './convert.ts';
import { stringConverter } from './convert.ts';
import type { CompiledSource } from './compile-source.ts';
import { FileFormatError } from './errors.ts';
import { acceptsCustomColumns } from './field-kinds.ts';

/** How one API field (canonical or custom) is filled from a row. */
export interface ColumnPlan {
  readonly field: string;
  /** Index of the source column, or -1 when only the default applies. */
  readonly index: number;
  /** The source header, for reject reports. */
  readonly header: string | undefined;
  readonly convert: Converter;
  readonly fallback: CellValue | undefined;
}

export interface HeaderPlan {
  /** The header cells, trimmed. */
  readonly headers: readonly string[];
  /** Canonical fields first (schema order), then custom columns. */
  readonly plans: readonly ColumnPlan[];
  /** Products only: custom columns rows may carry: those named in `columns`/`defaults`, then left-over headers. */
  readonly customColumns: readonly string[];
  /** Headers whose values are not sent; unnamed columns appear as `(column N)`. */
  readonly ignoredColumns: readonly string[];
  readonly warnings: readonly string[];
}

function quoteList(names: readonly string[]): string {
  return names.map((n) => JSON.stringify(n)).join(', ');
}

export function planHeader(raw: readonly string[], source: CompiledSource, file: string): HeaderPlan {
  const headers = raw.map((name) => name.trim());
  const index = new Map<string, number>();
  headers.forEach((name, i) => {
    if (name === '') return;
    const first = index.get(name);
    if (first !== undefined) {
      throw new FileFormatError(
        'DUPLICATE_HEADER',
        `the header names ${JSON.stringify(name)} twice (columns ${first + 1} and ${i + 1}); names must be unique`,
        { file, line: 1 },
      );
    }
    index.set(name, i);
  });

  const consumed = new Set<number>();
  const plans: ColumnPlan[] = [];
  const warnings: string[] = [];
  const missing: string[] = [];
  let found = 0;

  const plan = (field: string, convert: Converter, required: boolean): boolean => {
    const header = source.columns[field] ?? field;
    const at = index.get(header);
    const fallback = source.defaults.get(field);
    if (at !== undefined) consumed.add(at);
    if (at === undefined && fallback === undefined) {
      if (required) missing.push(source.columns[field] === undefined ? field : `${field} (header ${JSON.stringify(header)})`);
      else if (source.columns[field] !== undefined) {
        warnings.push(`column ${JSON.stringify(header)} mapped to ${field} is not in the header`);
      }
      return false;
    }
    plans.push({ field, index: at ?? -1, header: at === undefined ? undefined : header, convert, fallback });
    return at !== undefined;
  };

  for (const info of source.fields) {
    if (plan(info.name, source.converter(info.name), info.required)) found++;
  }

  const canonical = new Set(source.fields.map((f) => f.name));
  const customColumns: string[] = [];
  const products = acceptsCustomColumns(source.entity);
  if (products) {
    // Custom columns named in `columns` or `defaults` first, so that their source headers are consumed.
    const named = new Set([...Object.keys(source.columns), ...source.defaults.keys()].filter((k) => !canonical.has(k)));
    for (const field of named) {
      if (plan(field, stringConverter, false)) customColumns.push(field);
      else if (source.defaults.has(field)) customColumns.push(field);
    }
  }

  const ignored: string[] = [];
  headers.forEach((name, i) => {
    if (consumed.has(i)) return;
    if (name === '') ignored.push(`(column ${i + 1})`);
    else if (products && !canonical.has(name) && !customColumns.includes(name)) {
      plans.push({ field: name, index: i, header: name, convert: stringConverter, fallback: undefined });
      customColumns.push(name);
    } else ignored.push(name);
  });

  if (found === 0) {
    const expected = source.fields
      .filter((f) => f.required)
      .map((f) => (source.columns[f.name] === undefined ? f.name : `${f.name} <- ${JSON.stringify(source.columns[f.name])}`));
    const hint = headers.length === 1 ? ' The header has a single column: is the delimiter right?' : '';
    throw new FileFormatError(
      'NO_KNOWN_COLUMNS',
      `none of the expected ${source.entity} columns (${expected.join(', ')}) found in the header ` +
        `(${quoteList(headers)}); check the \`columns:\` mapping.${hint}`,
      { file, line: 1 },
    );
  }
  if (missing.length > 0) {
    throw new FileFormatError(
      'MISSING_COLUMNS',
      `required ${source.entity} fields without a column or a default: ${missing.join(', ')} ` +
        `(header: ${quoteList(headers)}); check the \`columns:\` mapping or set \`defaults:\``,
      { file, line: 1 },
    );
  }
  if (ignored.length > 0) {
    warnings.push(`columns not sent (not ${source.entity} fields): ${quoteList(ignored)}`);
  }
  return { headers, plans, customColumns, ignoredColumns: ignored, warnings };
}
