/**
 * Names in the import header the agent builds for products: its fields, then the custom columns. The server tells
 * header names apart ignoring case and fails an import whose header holds `status` and `Status` (issue 28: a Shopify
 * export's `Status` column beside the agent's `status` field), so no two names of one header may differ only in case.
 *
 * A left-over column whose name is a field's but for case (`Status`) feeds that field when nothing else does (no
 * column of the field's own name, no `columns:` entry): every product field is text, so any value fits. Otherwise,
 * and for any custom name that repeats a taken one but for case, the column goes under a distinct name
 * (`Status (custom)`), with a warning that says why.
 */
export class ImportNames {
  /** Lower-cased name -> the name taken. */
  readonly #taken = new Map<string, string>();
  readonly #fields: ReadonlySet<string>;

  constructor(fields: readonly string[]) {
    this.#fields = new Set(fields);
    for (const field of fields) this.#taken.set(field.toLowerCase(), field);
  }

  /** The field `name` names but for case (`Status` -> `status`), or undefined. */
  fieldLike(name: string): string | undefined {
    const taken = this.#taken.get(name.toLowerCase());
    return taken !== undefined && taken !== name && this.#fields.has(taken) ? taken : undefined;
  }

  /**
   * Takes `name` for a custom column, or a distinct name when it repeats a taken one but for case; `warning` says so
   * then.
   */
  take(name: string): { readonly name: string; readonly warning?: string } {
    const clash = this.#taken.get(name.toLowerCase());
    let chosen = name;
    for (let n = 1; this.#taken.has(chosen.toLowerCase()); n += 1) chosen = `${name} (custom${n === 1 ? '' : ` ${n}`})`;
    this.#taken.set(chosen.toLowerCase(), chosen);
    if (clash === undefined) return { name };
    const q = JSON.stringify;
    return {
      name: chosen,
      warning: `custom column ${q(name)} sent as ${q(chosen)}: an import header may not hold ${q(clash)} and ${q(name)}, names that differ only in case (map the column in \`columns:\` to choose its name)`,
    };
  }
}

export function asFieldWarning(name: string, field: string): string {
  return `column ${JSON.stringify(name)} sent as the ${field} field (its name but for case; nothing else feeds ${field})`;
}
