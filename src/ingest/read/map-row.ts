/**
 * One parsed CSV record -> an API record or the reasons it is refused. Hot path: runs once per row.
 *
 * Cells are trimmed; an empty cell takes the field's default or is left out (never sent as ""); conversion
 * errors and schema errors are collected together (a field that failed conversion is not reported twice) and
 * ordered by field, so the first error is that of the leftmost field in schema order. The record is validated
 * with the entity's agent-side write schema, the same one the API client sends with.
 */
import type { z } from 'zod';
import { toValidationErrors } from '../../api/schemas/index.ts';
import { CellError } from './convert.ts';
import type { HeaderPlan } from './header.ts';

/** One reason a row is refused. `field` is null for a row-level problem (wrong number of fields). */
export interface RowError {
  readonly field: string | null;
  /** The source header the field came from, when it came from one. */
  readonly column?: string;
  /** The API's machine code: missing, decimal_parsing, string_too_long, ... or field_count. */
  readonly code: string;
  readonly message: string;
}

export type Mapped<R> = { ok: true; record: R } | { ok: false; first: RowError; errors: RowError[] };

type Schema = z.ZodType<unknown>;

export class RowMapper<R> {
  private readonly plan: HeaderPlan;
  private readonly schema: Schema;
  private readonly order: ReadonlyMap<string, number>;
  private readonly headerOf: ReadonlyMap<string, string>;

  constructor(plan: HeaderPlan, schema: Schema) {
    this.plan = plan;
    this.schema = schema;
    this.order = new Map(plan.plans.map((p, i) => [p.field, i]));
    this.headerOf = new Map(plan.plans.flatMap((p) => (p.header === undefined ? [] : [[p.field, p.header]])));
  }

  /**
   * The cells converted, without the schema's checks; null when a cell does not convert. For delta push's
   * comparison, which only hashes rows: a row it finds unchanged was valid when the API accepted it, and every
   * other row is read again, mapped and validated, by the send pass.
   */
  convert(fields: readonly string[]): Record<string, unknown> | null {
    const out: Record<string, unknown> = {};
    return this.#cells(fields, out, () => false) ? out : null;
  }

  /** Fills `out` from the cells; calls `failed` for a cell that does not convert (false: stop at once). */
  #cells(fields: readonly string[], out: Record<string, unknown>, failed: (field: string, error: CellError) => boolean): boolean {
    let ok = true;
    for (const p of this.plan.plans) {
      const cell = p.index < 0 ? '' : (fields[p.index] ?? '').trim();
      if (cell === '') {
        if (p.fallback !== undefined) out[p.field] = p.fallback;
        continue;
      }
      const value = p.convert(cell);
      if (value instanceof CellError) {
        ok = false;
        if (!failed(p.field, value)) return false;
        continue;
      }
      out[p.field] = value;
    }
    return ok;
  }

  map(fields: readonly string[]): Mapped<R> {
    const out: Record<string, unknown> = {};
    let errors: RowError[] | undefined;
    this.#cells(fields, out, (field, error) => {
      (errors ??= []).push(this.error(field, error.code, error.message));
      return true;
    });
    const result = this.schema.safeParse(out, { reportInput: true });
    if (result.success && errors === undefined) return { ok: true, record: result.data as R };
    const failed = new Set(errors?.map((e) => e.field));
    const all = errors ?? [];
    if (!result.success) {
      for (const issue of toValidationErrors(result.error)) {
        const field = issue.loc.length > 0 ? issue.loc.map(String).join('.') : null;
        if (field !== null && failed.has(field)) continue;
        all.push(this.error(field, issue.type, issue.msg));
      }
    }
    all.sort((a, b) => this.rank(a.field) - this.rank(b.field));
    // A failed parse has at least one issue; the fallback only satisfies the type.
    const first = all[0] ?? this.error(null, 'value_error', 'invalid row');
    return { ok: false, first, errors: all };
  }

  private rank(field: string | null): number {
    return field === null ? -1 : (this.order.get(field) ?? this.order.size);
  }

  private error(field: string | null, code: string, message: string): RowError {
    const column = field === null ? undefined : this.headerOf.get(field);
    return column === undefined ? { field, code, message } : { field, column, code, message };
  }
}
