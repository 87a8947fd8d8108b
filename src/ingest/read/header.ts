/**
 * The header line against the source's mapping (docs/mapping.md): where each API field's value comes from, which
 * columns become product custom columns, which are ignored. Decided once per file, before the first row.
 *
 * Rules:
 * - names are trimmed and matched exactly (case-sensitive); two equal non-empty names fail the file;
 * - every column is also `column_N`, N its 1-based position: the way to a column whose header cell is empty, or to
 *   any column by position (a header naming a column `column_N` keeps that name);
 * - a field named in `columns:` is read only through its mapping: a column, a template, or a list of them tried in
 *   order; references to columns the file lacks are left out (with a warning), and a required field left with
 *   none and no default fails the file (MISSING_COLUMNS);
 * - a field not named in `columns:` is read from a column of its own name, unless the mapping uses that column
 *   for something else (no second, implicit route into a field) or `ignore_columns` lists it;
 * - `defaults` fill a field whose value is empty or whose column is absent;
 * - a header holding no field at all fails the file (NO_KNOWN_COLUMNS); a `skip_rows` column the file lacks fails
 *   it too (every row would look empty and be skipped);
 * - left-over columns: for products, named ones become custom columns (as the API's CSV import does), except names
 *   of canonical fields; a name that is a field's but for case feeds that field or is renamed (import-names.ts);
 *   everything else (left-overs of the other entities, unnamed columns) is ignored and reported
 *   in one warning per file; `ignore_columns` are ignored silently.
 */
import type { ColumnRef } from '../../config/mapping-schema.ts';
import type { CellValue, Converter } from './convert.ts';
import { stringConverter } from './convert.ts';
import type { CompiledSource } from './compile-source.ts';
import { FileFormatError } from './errors.ts';
import { acceptsCustomColumns } from './field-kinds.ts';
import { asFieldWarning, ImportNames } from './import-names.ts';

/** A piece of a template as a row evaluates it: fixed text (literals, the file's name groups), a cell, the line. */
export type TemplatePiece = { readonly text: string } | { readonly index: number } | { readonly line: true };

/** One place a field's value may come from. */
export type CellSource =
  | { readonly kind: 'column'; readonly index: number; readonly header: string }
  | { readonly kind: 'template'; readonly pieces: readonly TemplatePiece[]; /** As written in the config. */ readonly text: string };

/** How one API field (canonical or custom) is filled from a row. */
export interface FieldPlan {
  readonly field: string;
  /** Tried in order, the first non-empty wins; empty when only the default applies. */
  readonly sources: readonly CellSource[];
  /** The source header, when the field comes from exactly one column (reject reports name it). */
  readonly header: string | undefined;
  readonly convert: Converter;
  /** Codes -> values (`maps:`). */
  readonly map: ReadonlyMap<string, string> | undefined;
  readonly fallback: CellValue | undefined;
}

export interface HeaderPlan {
  /** The header cells, trimmed. */
  readonly headers: readonly string[];
  /** Canonical fields first (schema order), then custom columns. */
  readonly plans: readonly FieldPlan[];
  /** Products only: custom columns rows may carry: those named in `columns`/`defaults`, then left-over headers. */
  readonly customColumns: readonly string[];
  /** Headers whose values are not sent; unnamed columns appear as `(column N)`. */
  readonly ignoredColumns: readonly string[];
  /** Columns a row's cells are cleaned for: every column a plan, fill_down or skip_rows reads. */
  readonly used: readonly number[];
  readonly fillDown: readonly number[];
  readonly skipWhenEmpty: readonly number[];
  readonly warnings: readonly string[];
}

function quoteList(names: readonly string[]): string {
  return names.map((n) => JSON.stringify(n)).join(', ');
}

/** A reference as written in the config: the column's name, or the template. */
function writtenAs(ref: ColumnRef): string {
  if (ref.kind === 'column') return ref.header;
  return ref.parts
    .map((p) => ('literal' in p ? p.literal.replaceAll('{', '{{').replaceAll('}', '}}') : 'column' in p ? `{${p.column}}` : 'file' in p ? `{file.${p.file}}` : '{line}'))
    .join('');
}

/** How a reference reads in messages: quoted. */
function refText(ref: ColumnRef): string {
  return JSON.stringify(writtenAs(ref));
}

function columnsOf(ref: ColumnRef): string[] {
  return ref.kind === 'column' ? [ref.header] : ref.parts.flatMap((p) => ('column' in p ? [p.column] : []));
}

/** The name a column is reachable by from its 0-based index: `column_1` for the first. */
export function positionName(index: number): string {
  return `column_${index + 1}`;
}

/**
 * Plans `raw` (the header cells) for `source`. `fileGroups`: the file's name (`name`) and the named groups of
 * `file_name` matched against it, for `{file.*}` in templates. `line`: where the header is (header-rows.ts).
 */
export function planHeader(raw: readonly string[], source: CompiledSource, file: string, fileGroups: Readonly<Record<string, string>> = {}, line = 1): HeaderPlan {
  const headers = raw.map((name) => name.trim());
  const index = new Map<string, number>();
  headers.forEach((name, i) => {
    if (name === '') return;
    const first = index.get(name);
    if (first !== undefined) {
      throw new FileFormatError(
        'DUPLICATE_HEADER',
        `the header names ${JSON.stringify(name)} twice (columns ${first + 1} and ${i + 1}); names must be unique`,
        { file, line },
      );
    }
    index.set(name, i);
  });
  // Every column is also reachable by its position (`column_3`: the third), an unnamed one included; a header
  // that names a column so keeps the name for itself.
  headers.forEach((_, i) => {
    const byPosition = positionName(i);
    if (!index.has(byPosition)) index.set(byPosition, i);
  });

  // Every column the mapping reads, for any field: never also read implicitly, never a custom column.
  const mapped = new Set<string>();
  for (const refs of source.columns.values()) for (const ref of refs) for (const column of columnsOf(ref)) mapped.add(column);
  // The same, by position: a column the mapping reads as `column_N` is as taken as one it reads by name.
  const mappedAt = new Set([...mapped].flatMap((column) => index.get(column) ?? []));

  const consumed = new Set<number>();
  const plans: FieldPlan[] = [];
  const warnings: string[] = [];
  const missing: string[] = [];
  let found = 0;

  /** The sources of `refs` the file has; references to absent columns are reported and left out. */
  const resolve = (field: string, refs: readonly ColumnRef[]): CellSource[] => {
    const sources: CellSource[] = [];
    for (const ref of refs) {
      const absent = columnsOf(ref).filter((c) => !index.has(c));
      if (absent.length > 0) {
        if (refs.length > 1 || source.defaults.has(field)) warnings.push(`${refText(ref)} mapped to ${field}: no column ${quoteList(absent)} in the header`);
        continue;
      }
      if (ref.kind === 'column') {
        const at = index.get(ref.header) as number;
        sources.push({ kind: 'column', index: at, header: ref.header });
        continue;
      }
      const pieces: TemplatePiece[] = ref.parts.map((p) => {
        if ('literal' in p) return { text: p.literal };
        if ('line' in p) return { line: true };
        if ('file' in p) return { text: fileGroups[p.file] ?? '' };
        return { index: index.get(p.column) as number };
      });
      sources.push({ kind: 'template', pieces, text: writtenAs(ref) });
    }
    return sources;
  };

  /** `as`: the name the field goes under (a custom field renamed: import-names.ts). */
  const plan = (field: string, convert: Converter, required: boolean, as = field): boolean => {
    const refs = source.columns.get(field);
    const fallback = source.defaults.get(field);
    let sources: CellSource[];
    if (refs !== undefined) {
      sources = resolve(field, refs);
    } else {
      const at = index.get(field);
      const implicit = at !== undefined && !mappedAt.has(at) && !source.ignoreColumns.has(field) && !source.ignoreColumns.has(positionName(at));
      sources = implicit ? [{ kind: 'column', index: at, header: field }] : [];
    }
    for (const s of sources) {
      if (s.kind === 'column') consumed.add(s.index);
      else for (const piece of s.pieces) if ('index' in piece) consumed.add(piece.index);
    }
    if (sources.length === 0 && fallback === undefined) {
      if (required) missing.push(refs === undefined ? field : `${field} (${refs.map(refText).join(' or ')})`);
      else if (refs !== undefined && refs.length === 1) {
        warnings.push(`${refText(refs[0] as ColumnRef)} mapped to ${field}: no such column in the header`);
      }
      return false;
    }
    const only = sources.length === 1 && sources[0]?.kind === 'column' ? sources[0].header : undefined;
    plans.push({ field: as, sources, header: only, convert, map: source.maps.get(field), fallback });
    return sources.length > 0;
  };

  for (const info of source.fields) {
    if (plan(info.name, source.converter(info.name), info.required)) found++;
  }

  const canonical = new Set(source.fields.map((f) => f.name));
  const customColumns: string[] = [];
  const products = acceptsCustomColumns(source.entity);
  const names = new ImportNames(source.fields.map((f) => f.name));
  if (products) {
    // Custom columns named in `columns`, `defaults` or `maps` first, so that their source columns are consumed.
    const named = new Set([...source.columns.keys(), ...source.defaults.keys(), ...source.maps.keys()].filter((k) => !canonical.has(k)));
    for (const field of named) {
      const taken = names.take(field);
      if (plan(field, stringConverter, false, taken.name) || source.defaults.has(field)) {
        customColumns.push(taken.name);
        if (taken.warning !== undefined) warnings.push(taken.warning);
      }
    }
  }

  const ignored: string[] = [];
  headers.forEach((name, i) => {
    if (consumed.has(i) || source.ignoreColumns.has(name) || source.ignoreColumns.has(positionName(i))) return;
    if (name === '') ignored.push(`(column ${i + 1})`);
    else if (products && !canonical.has(name) && !customColumns.includes(name) && !mapped.has(name)) {
      consumed.add(i);
      const sources = [{ kind: 'column', index: i, header: name }] as const;
      const field = names.fieldLike(name);
      const at = plans.findIndex((p) => p.field === field);
      if (field !== undefined && !source.columns.has(field) && (plans[at]?.sources.length ?? 0) === 0) {
        // Nothing else feeds the field (a default may): the column does, before the custom columns' plans.
        const fieldPlan = { field, sources, header: name, convert: source.converter(field), map: source.maps.get(field), fallback: source.defaults.get(field) };
        const firstCustom = plans.findIndex((p) => !canonical.has(p.field));
        if (at >= 0) plans[at] = fieldPlan;
        else plans.splice(firstCustom < 0 ? plans.length : firstCustom, 0, fieldPlan);
        warnings.push(asFieldWarning(name, field));
        return;
      }
      const taken = names.take(name);
      plans.push({ field: taken.name, sources, header: name, convert: stringConverter, map: undefined, fallback: undefined });
      customColumns.push(taken.name);
      if (taken.warning !== undefined) warnings.push(taken.warning);
    } else ignored.push(name);
  });

  if (found === 0) {
    const expected = source.fields
      .filter((f) => f.required)
      .map((f) => {
        const refs = source.columns.get(f.name);
        return refs === undefined ? f.name : `${f.name} <- ${refs.map(refText).join(' or ')}`;
      });
    const hint = headers.length === 1 ? ' The header has a single column: is the delimiter right?' : '';
    throw new FileFormatError(
      'NO_KNOWN_COLUMNS',
      `none of the expected ${source.entity} columns (${expected.join(', ')}) found in the header ` +
        `(${quoteList(headers)}); check the \`columns:\` mapping.${hint}`,
      { file, line },
    );
  }
  if (missing.length > 0) {
    throw new FileFormatError(
      'MISSING_COLUMNS',
      `required ${source.entity} fields without a column or a default: ${missing.join(', ')} ` +
        `(header: ${quoteList(headers)}); check the \`columns:\` mapping or set \`defaults:\``,
      { file, line },
    );
  }
  const lacking = source.skipWhenEmpty.filter((c) => !index.has(c));
  if (lacking.length > 0) {
    throw new FileFormatError(
      'MISSING_COLUMNS',
      `skip_rows.when_empty names ${quoteList(lacking)}, not in the header (${quoteList(headers)}): every row would be skipped`,
      { file, line },
    );
  }
  const fillDown = source.fillDown.flatMap((c) => {
    const at = index.get(c);
    if (at === undefined) warnings.push(`fill_down names ${JSON.stringify(c)}, not in the header`);
    return at === undefined ? [] : [at];
  });
  const skipWhenEmpty = source.skipWhenEmpty.map((c) => index.get(c) as number);
  if (ignored.length > 0) {
    warnings.push(`columns not sent (not ${source.entity} fields): ${quoteList(ignored)}`);
  }
  const used = new Set<number>([...consumed, ...fillDown, ...skipWhenEmpty]);
  return { headers, plans, customColumns, ignoredColumns: ignored, used: [...used].sort((a, b) => a - b), fillDown, skipWhenEmpty, warnings };
}

/** The columns a field plan reads. */
export function columnsRead(plan: FieldPlan): number[] {
  return plan.sources.flatMap((s) => (s.kind === 'column' ? [s.index] : s.pieces.flatMap((p) => ('index' in p ? [p.index] : []))));
}

/**
 * `plan` narrowed to `fields` (delta push's line mode reads only a row's key: ReadInit.keysOnly): their plans, the
 * columns they read, and the rows' skip and fill-down rules as they are.
 */
export function narrowedPlan(plan: HeaderPlan, fields: readonly string[]): HeaderPlan {
  const wanted = new Set(fields);
  const plans = plan.plans.filter((p) => wanted.has(p.field));
  const used = new Set<number>([...plans.flatMap(columnsRead), ...plan.fillDown, ...plan.skipWhenEmpty]);
  return { ...plan, plans, used: [...used].sort((a, b) => a - b) };
}
