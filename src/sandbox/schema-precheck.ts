/**
 * A fast pre-check compiled from a shared zod object schema, for the bulk hot path. Measured on transactions:
 * zod's safeParse with `reportInput` costs about 3 µs per row and allocates a dozen objects; this check costs a
 * fraction of that and allocates nothing.
 *
 * Contract: `check(input)` returns true only when zod would accept `input` and return an equal object (for the
 * schemas it compiles, zod's output is the input's own keys and values); the caller then uses `input` itself.
 * When the check returns false, nothing is concluded: the caller parses with zod, which stays the only authority on
 * what is refused and why. So the contract is never forked: the check is derived from the schema at start-up, and
 * `compilePrecheck` returns null for any construct it does not know (a refine, transform, default, coercion, a
 * `when` condition, an unknown format...), which simply turns the fast path off for that schema.
 *
 * Mirrored zod 4 semantics: strings are typeof-checked; min/max length count Unicode code points (surrogate pairs
 * count once); string formats and regex checks are `pattern.test`; integers are safe integers; strict objects
 * refuse unknown keys; a catchall checks every extra key.
 */
import type { z } from 'zod';

type Check = (value: unknown) => boolean;

interface Def {
  readonly type: string;
  readonly checks?: readonly { readonly _zod: { readonly def: CheckDef } }[];
  readonly innerType?: Schema;
  readonly shape?: Readonly<Record<string, Schema>>;
  readonly catchall?: Schema;
  readonly format?: string;
  readonly pattern?: RegExp;
  readonly coerce?: boolean;
  readonly check?: string;
}

interface CheckDef {
  readonly check: string;
  readonly format?: string;
  readonly pattern?: RegExp;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly when?: { readonly name?: string };
  readonly abort?: boolean;
}

interface Schema {
  readonly _zod: { readonly def: Def };
}

const PATTERN_FORMATS = new Set(['regex', 'datetime', 'date', 'uuid', 'guid']);
/**
 * zod gives length checks this `when` by default: "the value is not nullish and has a length", always true for a
 * string. Any other condition turns the fast path off.
 */
const DEFAULT_LENGTH_WHEN = '_whenHasLength';

function codePointLength(value: string): number {
  let count = value.length;
  for (let i = 0; i < value.length - 1; i += 1) {
    if ((value.charCodeAt(i) & 0xfc00) === 0xd800 && (value.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      count -= 1;
      i += 1;
    }
  }
  return count;
}

function stringCheck(def: Def): Check | null {
  if (def.coerce) return null;
  const patterns: RegExp[] = [];
  let min = 0;
  let max = Number.POSITIVE_INFINITY;
  if (def.format !== undefined) {
    if (!PATTERN_FORMATS.has(def.format) || !(def.pattern instanceof RegExp) || def.pattern.global || def.pattern.sticky) return null;
    patterns.push(def.pattern);
  }
  for (const { _zod } of def.checks ?? []) {
    const c = _zod.def;
    const lengthCheck = c.check === 'min_length' || c.check === 'max_length';
    if (c.when !== undefined && !(lengthCheck && c.when.name === DEFAULT_LENGTH_WHEN)) return null;
    if (c.check === 'min_length' && typeof c.minimum === 'number') min = Math.max(min, c.minimum);
    else if (c.check === 'max_length' && typeof c.maximum === 'number') max = Math.min(max, c.maximum);
    else if (
      c.check === 'string_format' &&
      c.format !== undefined &&
      PATTERN_FORMATS.has(c.format) &&
      c.pattern instanceof RegExp &&
      !c.pattern.global &&
      !c.pattern.sticky
    ) {
      patterns.push(c.pattern);
    } else return null;
  }
  return (value) => {
    if (typeof value !== 'string') return false;
    if (value.length < min || value.length > max) {
      const points = codePointLength(value);
      if (points < min || points > max) return false;
    }
    for (const pattern of patterns) if (!pattern.test(value)) return false;
    return true;
  };
}

function numberCheck(def: Def): Check | null {
  if (def.coerce) return null;
  let integer = false;
  for (const { _zod } of def.checks ?? []) {
    const c = _zod.def;
    if (c.when !== undefined || c.check !== 'number_format' || c.format !== 'safeint') return null;
    integer = true;
  }
  return integer ? (value) => Number.isSafeInteger(value) : (value) => typeof value === 'number' && Number.isFinite(value);
}

function compileValue(schema: Schema): Check | null {
  const def = schema._zod.def;
  switch (def.type) {
    case 'string':
      return stringCheck(def);
    case 'number':
      return numberCheck(def);
    case 'boolean':
      return (def.checks ?? []).length === 0 ? (value) => typeof value === 'boolean' : null;
    case 'optional':
    case 'nullable': {
      if ((def.checks ?? []).length > 0 || !def.innerType) return null;
      const inner = compileValue(def.innerType);
      if (!inner) return null;
      return def.type === 'optional' ? (value) => value === undefined || inner(value) : (value) => value === null || inner(value);
    }
    default:
      return null;
  }
}

/** A pre-check that never vouches for anything: the fast path off. */
export const NO_PRECHECK = (): boolean => false;

/** Compiles the pre-check of an object schema, or returns null when the schema uses anything not mirrored here. */
export function compilePrecheck(schema: z.ZodType): ((input: unknown) => boolean) | null {
  const def = (schema as unknown as Schema)._zod.def;
  if (def.type !== 'object' || !def.shape || (def.checks ?? []).length > 0) return null;
  const fields = new Map<string, Check>();
  const required: string[] = [];
  for (const [name, field] of Object.entries(def.shape)) {
    const check = compileValue(field);
    if (!check) return null;
    fields.set(name, check);
    if (!check(undefined)) required.push(name);
  }
  let extra: Check | null = null;
  const catchallType = def.catchall?._zod.def.type;
  if (def.catchall !== undefined && catchallType !== 'never') {
    extra = compileValue(def.catchall);
    if (!extra) return null;
  }
  return (input) => {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return false;
    if (Object.getPrototypeOf(input) !== Object.prototype) return false;
    const record = input as Record<string, unknown>;
    // for-in instead of Object.keys: no array per row. The prototype is Object.prototype (checked above), whose
    // properties are not enumerable, so only own keys are visited.
    for (const key in record) {
      if (key === '__proto__') return false; // zod's output would differ (an assignment to __proto__)
      const check = fields.get(key) ?? extra;
      if (check === null || !check(record[key])) return false;
    }
    for (const key of required) if (!Object.hasOwn(record, key)) return false;
    return true;
  };
}
