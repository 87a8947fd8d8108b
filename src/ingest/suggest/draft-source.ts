/**
 * `sources suggest`: a `sources:` entry drafted from a file's own content (sample-file.ts), with the reason for
 * every decision written beside it as a comment. It decides: where the header is (and whether it spans two lines),
 * the entity (unless given), which column feeds which field (names in several languages, field-names.ts, checked
 * against what the column holds, column-profile.ts), the number and date formats, the null markers, and a key that
 * cannot collapse two sales into one.
 *
 * What the file cannot say is never guessed: a field it does not hold (a store, a currency, a competitor) comes from
 * `--set FIELD=VALUE`, or is left as a placeholder `${SET_<FIELD>}` that `config validate` refuses (an unset
 * environment variable), with a comment that says what to put there.
 */
import { stringify } from 'yaml';
import { BUSINESS_KEY_FIELDS, ENTITIES, type Entity } from '../../api/schemas/index.ts';
import { DEFAULT_NULL_VALUES } from '../../config/mapping-schema.ts';
import { ENTITY_FIELDS, type FieldInfo } from '../read/field-kinds.ts';
import { profileColumn, type ColumnProfile } from './column-profile.ts';
import { nameScore, namesAnyField } from './field-names.ts';
import type { FileSample } from './sample-file.ts';

/** How far down the header may be: the letterhead of a spreadsheet price list is a dozen lines. */
export const HEADER_SEARCH_LINES = 50;

export interface DraftInput {
  readonly sample: FileSample;
  /** The file's name, for the draft's `name` and `path`. */
  readonly fileName: string;
  readonly entity?: Entity | undefined;
  /** `--set FIELD=VALUE`: a value for every row. */
  readonly set: Readonly<Record<string, string>>;
}

export interface Draft {
  readonly entity: Entity;
  /** The YAML text of one `sources:` list entry, with comments, ready to paste under `sources:`. */
  readonly yaml: string;
  /** Fields left as placeholders: `config validate` refuses the draft until they are set. */
  readonly placeholders: readonly string[];
  /** The source as an object (placeholders included), for --preview. */
  readonly source: Record<string, unknown>;
}

interface Header {
  /** Index in sample.records of the (first) header record. */
  readonly at: number;
  readonly rows: 1 | 2;
  readonly names: readonly string[];
  readonly why: string;
}

const isNumberish = (cell: string) => /^[^A-Za-z]*\d[^A-Za-z]*$/.test(cell.trim());

/** How many rows under a header candidate are compared with the line after it (shapedLikeRowsBelow). */
const SHAPE_ROWS = 20;

/** A cell's shape: letters as `a`, digits as `9`, each run as one (`SKU-001` and `SKU-117` are both `a-9`). */
const shapeOf = (cell: string) => cell.trim().replace(/\p{L}+/gu, 'a').replace(/\d+/g, '9');

/**
 * Whether `row` reads as one of the rows below it: in most of its filled cells, its shape is the one most of the
 * column's cells below have (`SKU-001` over `SKU-002`, `SKU-003`). A header's second line (`Nr.` over `A-1`, `je
 * Stück` over `0,90 €`) is shaped otherwise. The first data row of a column without numbers is no header line.
 */
function shapedLikeRowsBelow(row: readonly string[], below: readonly (readonly string[])[]): boolean {
  let compared = 0;
  let alike = 0;
  row.forEach((cell, i) => {
    const column = below.map((r) => r[i] ?? '').filter((c) => c.trim() !== '');
    if (cell.trim() === '' || column.length === 0) return;
    compared += 1;
    const shape = shapeOf(cell);
    if (column.filter((c) => shapeOf(c) === shape).length * 2 >= column.length) alike += 1;
  });
  return compared > 0 && alike * 2 > compared;
}

function findHeader(sample: FileSample): Header {
  const records = sample.records.slice(0, HEADER_SEARCH_LINES);
  const named = records.map((r) => r.fields.filter((c) => namesAnyField(c)).length);
  const best = Math.max(0, ...named);
  const at = best >= 2 ? named.findIndex((n) => n === best) : 0;
  const first = records[at]?.fields ?? [];
  const next = sample.records[at + 1]?.fields ?? [];
  const after = sample.records[at + 2]?.fields ?? [];
  // A header over two lines: the second holds text only, under empty cells of the first or adding to them, and
  // the line after it is data (it holds numbers).
  const nextIsText = next.filter((c) => c.trim() !== '').length >= 2 && next.every((c) => c.trim() === '' || !isNumberish(c));
  const fillsGaps = next.some((c, i) => c.trim() !== '' && (first[i] ?? '').trim() === '');
  const filled = (r: readonly string[]) => r.filter((c) => c.trim() !== '').length;
  const below = sample.records.slice(at + 2, at + 2 + SHAPE_ROWS).map((r) => r.fields);
  const twoRows =
    nextIsText && (fillsGaps || filled(next) < filled(first)) && after.some((c) => c.trim() !== '' && isNumberish(c)) && !shapedLikeRowsBelow(next, below);
  const width = Math.max(first.length, twoRows ? next.length : 0);
  const names = Array.from({ length: width }, (_, i) => {
    const joined = twoRows ? `${(first[i] ?? '').trim()} ${(next[i] ?? '').trim()}`.trim() : (first[i] ?? '').trim();
    return joined === '' ? `column_${i + 1}` : joined;
  });
  const line = sample.records[at]?.line ?? 1;
  let why = at === 0 ? 'the first line names the columns' : `line ${line} is the first that names the columns; the ${line - 1} line(s) above are skipped`;
  if (best < 2) why = 'no line names two known columns: the first line is taken as the header (check the names below)';
  if (twoRows) why += `; the header continues on line ${sample.records[at + 1]?.line ?? line + 1} (cells joined with a space)`;
  return { at, rows: twoRows ? 2 : 1, names, why };
}

/** Rows of the table: after the header, up to the first row that is too sparse to be one (a note under the table). */
function tableRows(sample: FileSample, header: Header): (readonly string[])[] {
  const rows = sample.records.slice(header.at + header.rows).map((r) => r.fields);
  const filled = (r: readonly string[]) => r.filter((c) => c.trim() !== '').length;
  return rows.filter((r) => filled(r) >= Math.min(2, header.names.length));
}

function fits(field: FieldInfo, column: ColumnProfile): boolean {
  switch (field.kind) {
    case 'decimal':
      return column.kind === 'number';
    case 'integer':
      return column.kind === 'number' && column.number?.decimal === null;
    case 'date':
      return column.kind === 'date' || column.kind === 'datetime';
    case 'datetime':
      return column.kind === 'datetime' || column.kind === 'date';
    case 'boolean':
      return column.kind === 'text' || column.kind === 'number';
    default:
      return column.kind !== 'empty';
  }
}

interface Mapping {
  readonly columns: Map<string, ColumnProfile>;
  readonly score: number;
  readonly missingRequired: readonly string[];
}

/** Which column feeds which field: required fields first, each the best-named column that fits and is free. */
function mapEntity(entity: Entity, columns: readonly ColumnProfile[], set: Readonly<Record<string, string>>): Mapping {
  const taken = new Set<number>();
  const mapped = new Map<string, ColumnProfile>();
  const fields = [...ENTITY_FIELDS[entity]].sort((a, b) => Number(b.required) - Number(a.required));
  let score = 0;
  const missingRequired: string[] = [];
  for (const field of fields) {
    if (set[field.name] !== undefined) continue;
    const candidates = columns
      .filter((c) => !taken.has(c.index) && fits(field, c))
      .map((c) => ({ c, s: nameScore(field.name, c.name) }))
      .filter((x) => x.s > 0)
      .sort((a, b) => b.s - a.s || a.c.index - b.c.index);
    // A competitor's list shows one price: it is both the regular and the effective price.
    const shared = entity === 'competitor_prices' && field.name === 'effective_price' ? mapped.get('regular_price') : undefined;
    const hit = candidates[0] ?? (shared !== undefined ? { c: shared, s: 1 } : undefined);
    if (hit === undefined) {
      if (field.required) missingRequired.push(field.name);
      continue;
    }
    taken.add(hit.c.index);
    mapped.set(field.name, hit.c);
    score += hit.s * (field.required ? 3 : 1);
  }
  return { columns: mapped, score, missingRequired };
}

/** Fields a file often does not hold and a person states once: placeholders, never guesses. */
const STATED_FIELDS = new Set(['store_id', 'currency', 'competitor_name']);

function guessEntity(columns: readonly ColumnProfile[], set: Readonly<Record<string, string>>): { entity: Entity; why: string } {
  // A value given with --set names a field: only entities that have it are candidates.
  const candidates = ENTITIES.filter((e) => Object.keys(set).every((f) => ENTITY_FIELDS[e].some((x) => x.name === f)));
  const ranked = (candidates.length > 0 ? candidates : ENTITIES).map((entity) => ({ entity, m: mapEntity(entity, columns, set) }))
    .map(({ entity, m }) => ({ entity, m, unfit: m.missingRequired.filter((f) => !STATED_FIELDS.has(f)).length }))
    .sort((a, b) => a.unfit - b.unfit || b.m.score - a.m.score);
  const best = ranked[0];
  if (best === undefined) return { entity: 'products', why: 'nothing matched' };
  const held = [...best.m.columns.keys()].join(', ');
  return { entity: best.entity, why: `guessed from the columns (${held}); say --entity to choose another` };
}

function quote(value: string): string {
  return stringify(value).trimEnd();
}

/** `key: value` as block YAML at `indent`: a scalar on the line, a list or a map below it. */
function entryLines(key: string, value: unknown, indent: string): string[] {
  const k = /^[A-Za-z0-9_]+$/.test(key) ? key : quote(key);
  if (Array.isArray(value)) return [`${indent}${k}:`, ...value.map((v) => `${indent}  - ${quote(String(v))}`)];
  if (typeof value === 'object' && value !== null) {
    return [`${indent}${k}:`, ...Object.entries(value).flatMap(([sub, v]) => entryLines(sub, v, `${indent}  `))];
  }
  return [`${indent}${k}: ${typeof value === 'string' ? quote(value) : String(value)}`];
}

/**
 * A second column for a field whose column is empty on some rows, when another column that names the same field is
 * filled on exactly those rows (a promotion row with an empty `Price` and a `SpecialPrice`): `columns:` then lists
 * both, the first non-empty wins.
 */
function fallbackColumn(field: string, mapped: ColumnProfile, columns: readonly ColumnProfile[], rows: readonly (readonly string[])[], used: ReadonlySet<number>): ColumnProfile | null {
  const empty = (r: readonly string[], i: number) => (r[i] ?? '').trim() === '';
  const gaps = rows.filter((r) => empty(r, mapped.index));
  if (gaps.length === 0) return null;
  const others = columns.filter((c) => !used.has(c.index) && c.kind === mapped.kind && nameScore(field, c.name) > 0 && gaps.every((r) => !empty(r, c.index)));
  // The column filled least where the first is filled too: a promotion price before a unit price filled everywhere.
  const overlap = (c: ColumnProfile) => rows.filter((r) => !empty(r, mapped.index) && !empty(r, c.index)).length;
  return others.sort((a, b) => overlap(a) - overlap(b))[0] ?? null;
}

/** A key for transactions that cannot collapse two sales: a receipt's own id, or receipt and line. */
function transactionKey(mapping: Mapping, rows: readonly (readonly string[])[]): { value: string; why: string } | null {
  const receipt = mapping.columns.get('transaction_id');
  if (receipt === undefined) return null;
  const cells = rows.map((r) => r[receipt.index] ?? '');
  if (new Set(cells).size === cells.length) return { value: receipt.name, why: `${receipt.name} is different on every line` };
  return {
    value: `{${receipt.name}}-{line}`,
    why: `a receipt (${receipt.name}) has several lines, and one item can be on two of them: its line number keeps each line a sale of its own`,
  };
}

export function draftSource(input: DraftInput): Draft {
  const { sample } = input;
  const header = findHeader(sample);
  const rows = tableRows(sample, header);
  const columns = header.names.map((name, i) => profileColumn(i, name, rows.map((r) => r[i] ?? '')));
  const chosen = input.entity !== undefined ? { entity: input.entity, why: 'given with --entity' } : guessEntity(columns, input.set);
  const entity = chosen.entity;
  const mapping = mapEntity(entity, columns, input.set);
  const base = sourceNameOf(input.fileName);

  const lines: string[] = [];
  const source: Record<string, unknown> = {};
  const put = (key: string, value: unknown, why: string) => {
    source[key] = value;
    lines.push(`  # ${why}`);
    lines.push(...entryLines(key, value, '  '));
  };
  lines.push(`- name: ${quote(base)}`);
  source['name'] = base;
  put('entity', entity, chosen.why);
  put('path', `./inbox/${base}`, 'the folder the agent watches for these files (create it, or change this)');
  if (sample.format === 'xlsx') put('format', 'xlsx', 'a workbook: the first sheet is read');
  else {
    put('encoding', sample.encoding, sample.encodingWhy);
    if (sample.delimiter !== null) put('delimiter', sample.delimiter === '\t' ? 'tab' : sample.delimiter, sample.delimiterWhy);
  }
  const headerLine = sample.records[header.at]?.line ?? 1;
  if (headerLine !== 1) put('header_row', headerLine, header.why);
  else lines.push(`  # ${header.why}`);
  if (header.rows === 2) put('header_rows', 2, 'the header spans two lines');

  // Numbers: the source's separators are those of most mapped number columns; a column written otherwise gets its own.
  const numbers = [...mapping.columns.values()].filter((c) => c.number !== null);
  const commaColumns = numbers.filter((c) => c.number?.decimal === ',');
  const decimal = commaColumns.length > numbers.filter((c) => c.number?.decimal != null).length / 2 ? ',' : '.';
  if (decimal === ',') put('decimal_separator', ',', `decimal commas in ${commaColumns.map((c) => c.name).join(', ')}`);
  const grouped = numbers.map((c) => c.number?.thousands).filter((t): t is NonNullable<typeof t> => t !== null && t !== undefined);
  if (grouped.length > 0) put('thousands_separator', grouped[0] === ' ' ? 'space' : grouped[0], `digits grouped by "${grouped[0]}" in the numbers`);
  const notes: string[] = [];
  const perField: Record<string, Record<string, string>> = {};
  for (const [field, c] of mapping.columns) {
    const n = c.number;
    if (n === null) continue;
    const own: Record<string, string> = {};
    if (n.decimal !== null && n.decimal !== decimal) own['decimal_separator'] = n.decimal;
    if (n.thousands !== null && n.thousands !== grouped[0]) own['thousands_separator'] = n.thousands === ' ' ? 'space' : n.thousands;
    if (Object.keys(own).length > 0) perField[field] = own;
    if (n.ambiguous) notes.push(`${c.name} holds numbers like ${c.examples[0] ?? ''} that read as a thousand or as a decimal: check it`);
    if (n.currency !== null) notes.push(`${c.name} writes a currency (${n.currency}) beside its numbers`);
    if (n.trailingMinus) notes.push(`${c.name} writes negative numbers with a trailing minus`);
    if (c.outliers > 0) notes.push(`${c.outliers} cell(s) of ${c.name} are not numbers written this way: those rows will be rejected, each with its reason`);
  }
  if (Object.keys(perField).length > 0) {
    put('number_format', perField, `columns that write numbers otherwise than the rest: ${Object.keys(perField).map((f) => mapping.columns.get(f)?.name ?? f).join(', ')}`);
  }
  for (const note of notes) lines.push(`  # note: ${note}`);

  const dated = [...mapping.columns.values()].filter((c) => c.dateFormat !== null);
  const formats = [...new Set(dated.map((c) => c.dateFormat))].filter((f): f is string => f !== null && f !== 'iso');
  if (formats.length > 0) put('date_format', formats.length === 1 ? formats[0] : formats, `dates written as ${dated.map((c) => `${c.name} (${c.examples[0] ?? ''})`).join(', ')}`);
  for (const c of dated.filter((d) => d.dayMonthUnsure)) {
    lines.push(`  # QUESTION: no date in ${c.name} has a day over 12, so day and month cannot be told apart; ${c.dateFormat ?? ''} is assumed: swap D and M if the file is the other way round`);
  }
  if (dated.some((c) => c.needsTimezone)) {
    lines.push('  # QUESTION: the times carry no offset. In which time zone were they written? Until you set it they are read as UTC:');
    lines.push('  # timezone: Europe/London');
  }

  const columnsEntry: Record<string, string | string[]> = {};
  const columnWhy: string[] = [];
  const keyFields = new Set<string>(BUSINESS_KEY_FIELDS[entity]);
  const used = new Set([...mapping.columns.values()].map((c) => c.index));
  for (const [field, c] of mapping.columns) {
    const backup = fallbackColumn(field, c, columns, rows, used);
    if (backup !== null) {
      used.add(backup.index);
      columnsEntry[field] = [c.name, backup.name];
      columnWhy.push(`${field} <- ${c.name}, or ${backup.name} on the rows where ${c.name} is empty`);
      continue;
    }
    columnsEntry[field] = c.name;
    columnWhy.push(`${field} <- ${c.name}${keyFields.has(field) ? ' (key)' : ''}`);
  }
  if (entity === 'competitor_prices' && !mapping.columns.has('item_id') && !mapping.columns.has('competitor_sku')) {
    // Without an item the key is the competitor and the time alone: every row of a competitor would collapse into
    // one. The column that is different on every row (a product URL) names the competitor's item.
    const distinct = columns.find((c) => c.kind === 'text' && c.filled === rows.length && c.distinct === rows.length && c.index === mapping.columns.get('source_url')?.index)
      ?? columns.find((c) => c.kind === 'text' && c.filled === rows.length && c.distinct === rows.length && !used.has(c.index));
    if (distinct !== undefined) {
      columnsEntry['competitor_sku'] = distinct.name;
      used.add(distinct.index);
      columnWhy.push(`competitor_sku <- ${distinct.name}: the file names no item, and ${distinct.name} is different on every row (the key needs one)`);
    }
  }
  if (entity === 'transactions') {
    const key = transactionKey(mapping, rows);
    if (key !== null) {
      columnsEntry['transaction_id'] = key.value;
      columnWhy.push(`transaction_id: ${key.why}`);
    }
  }
  if (Object.keys(columnsEntry).length > 0) put('columns', columnsEntry, `which column feeds which field, by name and content: ${columnWhy.join('; ')}`);

  const defaults: Record<string, string> = {};
  const placeholders: string[] = [];
  for (const [field, value] of Object.entries(input.set)) defaults[field] = value;
  for (const field of mapping.missingRequired) {
    defaults[field] = `\${SET_${field.toUpperCase()}}`;
    placeholders.push(field);
  }
  if (entity === 'product_store' || entity === 'transactions' || entity === 'competitor_prices') {
    if (!('currency' in defaults) && !mapping.columns.has('currency')) {
      const seen = numbers.map((c) => c.number?.currency).find((x) => x !== null && x !== undefined);
      defaults['currency'] = '${SET_CURRENCY}';
      placeholders.push(seen !== undefined ? `currency (the file writes ${seen})` : 'currency');
    }
  }
  if (Object.keys(defaults).length > 0) {
    const why = placeholders.length > 0
      ? `the file does not hold ${placeholders.join(', ')}: set each (here, or --set FIELD=VALUE); config validate refuses a \${SET_...} left`
      : 'values given with --set, for every row';
    put('defaults', defaults, why);
  }
  const unmapped = columns.filter((c) => !used.has(c.index));
  if (entity !== 'products' && unmapped.length > 0) put('ignore_columns', unmapped.map((c) => c.name), 'columns no field of the entity reads');
  else if (unmapped.length > 0) lines.push(`  # custom columns (products keep every other column): ${unmapped.map((c) => c.name).join(', ')}`);

  const markers = [...new Set(columns.flatMap((c) => c.nullMarkers))];
  const extra = markers.filter((m) => !DEFAULT_NULL_VALUES.some((d) => d.toLowerCase() === m.toLowerCase()));
  if (extra.length > 0) put('null_values', [...DEFAULT_NULL_VALUES, ...extra], `cells that mean "empty" seen in the file: ${markers.join(', ')}`);
  else if (markers.length > 0) lines.push(`  # cells that mean "empty" seen (already the default null_values): ${markers.join(', ')}`);
  if (sample.truncated) lines.push(`  # (decided from the first ${sample.records.length} records)`);
  return { entity, yaml: `${lines.join('\n')}\n`, placeholders, source };
}

/**
 * The draft's source name, from the file's (accents dropped): what a source name may be (src/config/source-schema.ts:
 * letters, digits, `_ . -`, starting with a letter or digit, at most 64), so that the draft passes `config validate`.
 */
export function sourceNameOf(fileName: string): string {
  const name = fileName
    .replace(/\.[^.]+$/, '')
    .normalize('NFD')
    .replace(/\p{M}/gu, '') // été -> ete, Größe -> große (ß stays, and becomes -)
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 64)
    .replace(/[^a-z0-9]+$/, '');
  return name === '' ? 'source' : name;
}
