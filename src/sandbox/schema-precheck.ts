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

const STRING = 0;
const NUMBER = 1;
const SAFE_INTEGER = 2;
const BOOLEAN = 3;

/**
 * What one field accepts, as data: a single check function reads it (no closure call per field, which made the
 * check cost more than the regular expressions it runs).
 */
interface FieldSpec {
  readonly kind: typeof STRING | typeof NUMBER | typeof SAFE_INTEGER | typeof BOOLEAN;
  readonly optional: boolean;
  readonly nullable: boolean;
  /** Length bounds in code points (strings). */
  readonly min: number;
  readonly max: number;
  readonly patterns: readonly RegExp[];
  /**
   * The string this field accepted last. The check is a pure function of the string, and bulk rows repeat values
   * (a price, a currency, a timestamp to the second), so an equal string skips the regular expressions.
   */
  lastAccepted: string | null;
}

function spec(kind: FieldSpec['kind'], min = 0, max = Number.POSITIVE_INFINITY, patterns: readonly RegExp[] = []): FieldSpec {
  return { kind, optional: false, nullable: false, min, max, patterns, lastAccepted: null };
}

function stringSpec(def: Def): FieldSpec | null {
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
  return spec(STRING, min, max, patterns);
}

function numberSpec(def: Def): FieldSpec | null {
  if (def.coerce) return null;
  let integer = false;
  for (const { _zod } of def.checks ?? []) {
    const c = _zod.def;
    if (c.when !== undefined || c.check !== 'number_format' || c.format !== 'safeint') return null;
    integer = true;
  }
  return spec(integer ? SAFE_INTEGER : NUMBER);
}

/**
 * The spec of a field schema, or null when it uses anything not mirrored here. `optional` and `nullable` wrappers
 * in any order and depth add up: each lets its value through and hands anything else to its inner schema.
 */
function compileValue(schema: Schema): FieldSpec | null {
  const def = schema._zod.def;
  switch (def.type) {
    case 'string':
      return stringSpec(def);
    case 'number':
      return numberSpec(def);
    case 'boolean':
      return (def.checks ?? []).length === 0 ? spec(BOOLEAN) : null;
    case 'optional':
    case 'nullable': {
      if ((def.checks ?? []).length > 0 || !def.innerType) return null;
      const inner = compileValue(def.innerType);
      if (!inner) return null;
      return def.type === 'optional' ? { ...inner, optional: true } : { ...inner, nullable: true };
    }
    default:
      return null;
  }
}

function accepts(field: FieldSpec, value: unknown): boolean {
  if (value === undefined) return field.optional;
  if (value === null) return field.nullable;
  switch (field.kind) {
    case STRING: {
      if (typeof value !== 'string') return false;
      if (value === field.lastAccepted) return true;
      if (value.length < field.min || value.length > field.max) {
        const points = codePointLength(value);
        if (points < field.min || points > field.max) return false;
      }
      for (const pattern of field.patterns) if (!pattern.test(value)) return false;
      field.lastAccepted = value;
      return true;
    }
    case NUMBER:
      return typeof value === 'number' && Number.isFinite(value);
    case SAFE_INTEGER:
      return Number.isSafeInteger(value);
    case BOOLEAN:
      return typeof value === 'boolean';
  }
}

/** How many key positions a compiled check remembers (rows with more keys look the rest up). */
const CACHED_POSITIONS = 64;

/** A pre-check that never vouches for anything: the fast path off. */
export const NO_PRECHECK = (): boolean => false;

/** Compiles the pre-check of an object schema, or returns null when the schema uses anything not mirrored here. */
export function compilePrecheck(schema: z.ZodType): ((input: unknown) => boolean) | null {
  const def = (schema as unknown as Schema)._zod.def;
  if (def.type !== 'object' || !def.shape || (def.checks ?? []).length > 0) return null;
  const fields = new Map<string, FieldSpec>();
  let requiredCount = 0;
  for (const [name, field] of Object.entries(def.shape)) {
    const compiled = compileValue(field);
    if (!compiled) return null;
    fields.set(name, compiled);
    if (!compiled.optional) requiredCount += 1;
  }
  let extra: FieldSpec | null = null;
  const catchallType = def.catchall?._zod.def.type;
  if (def.catchall !== undefined && catchallType !== 'never') {
    extra = compileValue(def.catchall);
    if (!extra) return null;
  }
  // The field met at each position of the last row checked: rows of a batch list their keys in the same order,
  // so a key is usually found by one comparison (keys from JSON.parse are internalized: a pointer comparison)
  // instead of a map lookup.
  const keysAt: string[] = [];
  const fieldsAt: (FieldSpec | null)[] = [];
  return (input) => {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return false;
    if (Object.getPrototypeOf(input) !== Object.prototype) return false;
    const record = input as Record<string, unknown>;
    let required = 0;
    let position = 0;
    // for-in instead of Object.keys: no array per row. The prototype is Object.prototype (checked above), whose
    // properties are not enumerable, so only own keys are visited, each once: counting the required ones met
    // tells whether all are there.
    for (const key in record) {
      let known: FieldSpec | null;
      if (keysAt[position] === key) known = fieldsAt[position] ?? null;
      else {
        if (key === '__proto__') return false; // zod's output would differ (an assignment to __proto__)
        known = fields.get(key) ?? null;
        if (position < CACHED_POSITIONS) {
          keysAt[position] = key;
          fieldsAt[position] = known;
        }
      }
      position += 1;
      const field = known ?? extra;
      if (field === null || !accepts(field, record[key])) return false;
      if (known !== null && !known.optional) required += 1;
    }
    return required === requiredCount;
  };
}
