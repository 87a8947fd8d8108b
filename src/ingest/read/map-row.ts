/**
 * One parsed CSV record -> an API record, a skipped row, or every reason the row is refused. Hot path: runs once
 * per row.
 *
 * The cells a row's plans read are cleaned once (clean-cell.ts: trimmed, Excel's apostrophe, null markers);
 * `fill_down` columns take the last non-empty value above an empty cell; a row whose `skip_rows` columns are all
 * empty is skipped. Then per field: the first non-empty source (a column, or a template whose columns are all
 * non-empty), mapped through `maps` (an unmapped code is a reject), converted; an empty value takes the field's
 * default or is left out (never sent as ""). Conversion, mapping and schema errors are collected together (a
 * field that failed conversion is not reported twice) and ordered by field: a reject lists every problem of the
 * row, the leftmost field in schema order first. The record is validated with the source's write schema, the same
 * one the API client sends with. A currency written in a decimal cell (`12,90 USD`) must be the row's `currency`, or
 * when the row has none, the one the row's other decimal cells name: else the row is a `currency_mismatch` reject,
 * never a price sent in the wrong currency.
 */
import type { z } from 'zod';
import { toValidationErrors } from '../../api/schemas/index.ts';
import type { CellCleaner } from './clean-cell.ts';
import { CellError, currencyCodeOf, currencyIn, readsDecimal, shown, stringConverter } from './convert.ts';
import type { CellSource, HeaderPlan } from './header.ts';

/** One reason a row is refused. `field` is null for a row-level problem (wrong number of fields). */
export interface RowError {
  readonly field: string | null;
  /** Where the field's value came from (`"Preis"`, `"Price" or "SpecialPrice"`), when it came from the file. */
  readonly column?: string;
  /** The API's machine code: missing, decimal_parsing, string_too_long, ... or field_count, unmapped_value. */
  readonly code: string;
  readonly message: string;
}

export type Mapped<R> =
  | { kind: 'ok'; record: R }
  | { kind: 'skip' }
  | { kind: 'reject'; first: RowError; errors: RowError[] };

type Schema = z.ZodType<unknown>;

export class RowMapper<R> {
  private readonly plan: HeaderPlan;
  private readonly schema: Schema;
  private readonly clean: CellCleaner;
  private readonly order: ReadonlyMap<string, number>;
  /** Field -> where its value comes from: the column's name, or the sources tried (`Price or {A}-{B}`). */
  private readonly sourceOf: ReadonlyMap<string, string>;
  /** This row's cleaned cells, by column index (only the used ones are set). */
  private readonly cells: string[];
  /** fill_down: the last non-empty value of each such column. */
  private readonly above: string[];
  /** Whether a field is made with `{line}` (a till log's key): a row's line is part of what it sends. */
  readonly usesLine: boolean;
  /** By plan: whether the field is a decimal (its cell may name a currency). */
  private readonly decimal: readonly boolean[];
  /** This row's decimal cells that named a currency, in plan order. */
  private marks: { field: string; cell: string; code: string }[] | undefined;

  constructor(plan: HeaderPlan, schema: Schema, clean: CellCleaner) {
    this.plan = plan;
    this.schema = schema;
    this.clean = clean;
    this.order = new Map(plan.plans.map((p, i) => [p.field, i]));
    this.sourceOf = new Map(
      plan.plans.flatMap((p) => (p.sources.length === 0 ? [] : [[p.field, p.sources.map((s) => (s.kind === 'column' ? s.header : s.text)).join(' or ')]])),
    );
    this.cells = new Array<string>(plan.headers.length).fill('');
    this.above = new Array<string>(plan.headers.length).fill('');
    this.decimal = plan.plans.map((p) => readsDecimal(p.convert));
    this.usesLine = plan.plans.some((p) => p.sources.some((s) => s.kind === 'template' && s.pieces.some((piece) => 'line' in piece)));
  }

  map(fields: readonly string[], line: number): Mapped<R> {
    if (this.#prepare(fields)) return { kind: 'skip' };
    const out: Record<string, unknown> = {};
    let errors: RowError[] | undefined;
    this.#fill(out, line, (field, code, message) => {
      (errors ??= []).push(this.error(field, code, message));
      return true;
    });
    if (this.marks !== undefined) {
      for (const mismatch of this.#currencyMismatches(out['currency'])) (errors ??= []).push(mismatch);
    }
    const result = this.schema.safeParse(out, { reportInput: true });
    if (result.success && errors === undefined) return { kind: 'ok', record: result.data as R };
    const failed = new Set(errors?.map((e) => e.field));
    const all = errors ?? [];
    if (!result.success) {
      for (const issue of toValidationErrors(result.error)) {
        const field = issue.loc.length > 0 ? issue.loc.map(String).join('.') : null;
        if (field !== null && failed.has(field)) continue;
        all.push(this.error(field, issue.type, this.explain(field, issue.type, issue.msg)));
      }
    }
    all.sort((a, b) => this.rank(a.field) - this.rank(b.field));
    // A failed parse has at least one issue; the fallback only satisfies the type.
    const first = all[0] ?? this.error(null, 'value_error', 'invalid row');
    return { kind: 'reject', first, errors: all };
  }

  /**
   * The row's fields converted, without the schema's checks: null when a cell does not convert or map. For delta
   * push's comparison, which only hashes rows: a row it finds unchanged was valid when the API accepted it, and every
   * other row is read again, mapped and validated, by the send pass.
   */
  convert(fields: readonly string[], line: number): Mapped<R> | null {
    if (this.#prepare(fields)) return { kind: 'skip' };
    const out: Record<string, unknown> = {};
    return this.#fill(out, line, () => false) ? { kind: 'ok', record: out as R } : null;
  }

  /**
   * The column each field is taken from as it is, when that is so for every field this mapper fills: a string field
   * read from one column, without `maps`, and no `fill_down` or `skip_rows` in the plan. A row whose cells in those
   * columns the cleaner keeps as they are (CellCleaner.keeps) then converts to exactly those cells: `convert` returns
   * `{ field: cell }` for each. Null otherwise. Delta push's first pass takes a key from such cells as bytes
   * (ingest/delta/fast/line-scan.ts).
   */
  verbatim(): { readonly columns: ReadonlyMap<string, number>; readonly keeps: CellCleaner['keeps'] } | null {
    if (this.plan.fillDown.length > 0 || this.plan.skipWhenEmpty.length > 0) return null;
    const columns = new Map<string, number>();
    for (const p of this.plan.plans) {
      const only = p.sources.length === 1 ? p.sources[0] : undefined;
      if (only?.kind !== 'column' || p.map !== undefined || p.convert !== stringConverter) return null;
      columns.set(p.field, only.index);
    }
    return { columns, keeps: this.clean.keeps };
  }

  /** A row not mapped (delta push's send pass: a row it will not send): only what later rows take from it (fill_down). */
  carry(fields: readonly string[]): void {
    for (const i of this.plan.fillDown) {
      const cell = this.clean(fields[i]);
      if (cell !== '') this.above[i] = cell;
    }
  }

  /** Cleans the used cells and fills down; true when the skip rule says the row is not data. */
  #prepare(fields: readonly string[]): boolean {
    const cells = this.cells;
    for (const i of this.plan.used) cells[i] = this.clean(fields[i]);
    for (const i of this.plan.fillDown) {
      if (cells[i] === '') cells[i] = this.above[i] ?? '';
      else this.above[i] = cells[i] as string;
    }
    return this.plan.skipWhenEmpty.length > 0 && this.plan.skipWhenEmpty.every((i) => cells[i] === '');
  }

  /** The decimal cells whose currency is not the row's (or, without one, not the first such cell's). */
  #currencyMismatches(currency: unknown): RowError[] {
    const marks = this.marks ?? [];
    // The row's currency as its code (`€` is EUR); one that names several (`$`) is not compared.
    const own = typeof currency === 'string' ? (currencyCodeOf(currency) ?? null) : undefined;
    if (own === null) return [];
    const [first] = marks;
    const mismatches: RowError[] = [];
    for (const mark of marks) {
      if (mark.code === (own ?? first?.code)) continue;
      const other = own === undefined ? `${shown(first?.cell ?? '')} is in ${first?.code}` : `the row's currency is ${own}`;
      mismatches.push(this.error(mark.field, 'currency_mismatch', `${shown(mark.cell)} is in ${mark.code}, but ${other}`));
    }
    return mismatches;
  }

  /** Fills `out` from the cells; calls `failed` for a cell that does not map or convert (false: stop at once). */
  #fill(out: Record<string, unknown>, line: number, failed: (field: string, code: string, message: string) => boolean): boolean {
    let ok = true;
    this.marks = undefined;
    const plans = this.plan.plans;
    for (let i = 0; i < plans.length; i++) {
      const p = plans[i]!;
      const cell = this.value(p.sources, line);
      if (cell === '') {
        if (p.fallback !== undefined) out[p.field] = p.fallback;
        continue;
      }
      let text = cell;
      if (p.map !== undefined) {
        const mapped = p.map.get(cell);
        if (mapped === undefined) {
          ok = false;
          if (!failed(p.field, 'unmapped_value', `${shown(cell)} is not in maps.${p.field}`)) return false;
          continue;
        }
        text = mapped;
      }
      const value = p.convert(text);
      if (value instanceof CellError) {
        ok = false;
        if (!failed(p.field, value.code, value.message)) return false;
        continue;
      }
      out[p.field] = value;
      // Only a cell the converter shortened can hold a currency: `12.90` and `12,90` cost a comparison of lengths.
      if (this.decimal[i] === true && typeof value === 'string' && value.length !== text.length) {
        const code = currencyIn(text);
        if (code !== undefined) (this.marks ??= []).push({ field: p.field, cell: text, code });
      }
    }
    return ok;
  }

  /** The first non-empty source value; a template is empty when any column it uses is empty. */
  private value(sources: readonly CellSource[], line: number): string {
    for (const source of sources) {
      if (source.kind === 'column') {
        const cell = this.cells[source.index] ?? '';
        if (cell !== '') return cell;
        continue;
      }
      let text = '';
      let complete = true;
      for (const piece of source.pieces) {
        if ('text' in piece) text += piece.text;
        else if ('line' in piece) text += String(line);
        else {
          const cell = this.cells[piece.index] ?? '';
          if (cell === '') {
            complete = false;
            break;
          }
          text += cell;
        }
      }
      if (complete && text !== '') return text;
    }
    return '';
  }

  /** A missing field says where it was looked for. */
  private explain(field: string | null, code: string, message: string): string {
    if (code !== 'missing' || field === null) return message;
    const plan = this.plan.plans[this.order.get(field) ?? -1];
    if (plan === undefined || plan.sources.length === 0) return `${field} is required: the file has no column for it and no default is set`;
    if (plan.header !== undefined) return `${field} is required: the ${JSON.stringify(plan.header)} cell is empty`;
    return `${field} is required: no value in ${this.sourceOf.get(field) ?? field}`;
  }

  private rank(field: string | null): number {
    return field === null ? -1 : (this.order.get(field) ?? this.order.size);
  }

  private error(field: string | null, code: string, message: string): RowError {
    const column = field === null ? undefined : this.sourceOf.get(field);
    return column === undefined ? { field, code, message } : { field, column, code, message };
  }
}
