/**
 * A row with a cell that has no usable value (a workbook's `#N/A`, a formula without a saved result: xlsx-cells.ts)
 * is refused when the mapping reads that cell, with the code `cell_error` on each field the cell feeds. A problem in
 * a column nothing reads (an ignored column, a note) does not matter: the row goes through.
 */
import type { HeaderPlan } from './header.ts';
import type { RowError } from './map-row.ts';
import type { CellProblem } from './record-source.ts';

export const CELL_ERROR_CODE = 'cell_error';

/** Whether a field's plan reads column `index`, directly or through a template. */
function reads(plan: HeaderPlan['plans'][number], index: number): boolean {
  return plan.sources.some((s) => (s.kind === 'column' ? s.index === index : s.pieces.some((piece) => 'index' in piece && piece.index === index)));
}

/** One error per field fed by a problem cell the mapping reads (field null for a fill_down or skip_rows column); null when none. */
export function cellProblemErrors(plan: HeaderPlan, problems: readonly CellProblem[]): RowError[] | null {
  let errors: RowError[] | null = null;
  for (const problem of problems) {
    if (!plan.used.includes(problem.column)) continue;
    const column = plan.headers[problem.column] ?? `(column ${problem.column + 1})`;
    const fields = plan.plans.filter((p) => reads(p, problem.column)).map((p) => p.field);
    for (const field of fields.length === 0 ? [null] : fields) {
      (errors ??= []).push({ field, column, code: CELL_ERROR_CODE, message: problem.message });
    }
  }
  return errors;
}
