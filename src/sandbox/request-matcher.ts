/**
 * Matches requests against rules written as `"/v1/grids"` (a path prefix, any method) or
 * `"POST /v1/transactions/bulk"` (a method and a path prefix). Used by the 403 deny list and by fault targeting.
 * A prefix matches whole segments: `/v1/products` matches `/v1/products/bulk` but not `/v1/products_x`.
 */

interface Rule {
  readonly method: string | null;
  readonly prefix: string;
}

export class RequestMatcher {
  readonly rules: readonly string[];
  readonly #parsed: readonly Rule[];

  constructor(rules: readonly string[]) {
    this.rules = [...rules];
    this.#parsed = rules.map(parseRule);
  }

  get empty(): boolean {
    return this.#parsed.length === 0;
  }

  matches(method: string, path: string): boolean {
    for (const rule of this.#parsed) {
      if (rule.method !== null && rule.method !== method) continue;
      if (path === rule.prefix || path.startsWith(rule.prefix.endsWith('/') ? rule.prefix : `${rule.prefix}/`)) return true;
    }
    return false;
  }
}

function parseRule(rule: string): Rule {
  const trimmed = rule.trim();
  const space = trimmed.indexOf(' ');
  if (space < 0) return { method: null, prefix: trimmed };
  return { method: trimmed.slice(0, space).toUpperCase(), prefix: trimmed.slice(space + 1).trim() };
}
