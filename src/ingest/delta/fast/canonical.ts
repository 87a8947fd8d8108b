/**
 * The agent's canonical form of a row: what "the same row" means for delta push. Two records with the same canonical
 * text write the same thing on the platform; the state keeps a 64-bit hash of it per key (contentHash).
 *
 * - The values of the fields the file fills, in name order, each followed by a separator; a field without a value
 *   (absent, null or empty: the agent never sends one) is a mark of its own. The names are not in the text: the list
 *   of fields is part of the source's fingerprint, so two texts compared always cover the same fields (version 2:
 *   version 1 spelled every name out, and hashing them was most of the comparison's hashing).
 * - Decimals without their lexical noise: `012.50`, `12.5` and the number 12.5 are all `12.5`; integers likewise.
 * - Dates as `YYYY-MM-DD`, datetimes as the instant (`10:00:00Z` and `11:00:00+01:00` are one), booleans as
 *   true/false, strings as they are.
 *
 * The same form is computed from a mirror's record (what the platform holds, strings or numbers as it returns them),
 * restricted to the fields the source's file fills, so a change made on the platform shows up as a different hash.
 * CANONICAL_FORM_VERSION is part of every source's fingerprint: changing this module's rules makes every row count as
 * changed once, instead of comparing old hashes with new ones.
 */
import type { Entity } from '../../../api/schemas/index.ts';
import { ENTITY_FIELDS, type FieldKind } from '../../read/index.ts';
import { Hash64Stream, type Hash64 } from './hash.ts';

export const CANONICAL_FORM_VERSION = 2;

/** After a field's value, and in place of a field without one. */
const END_OF_VALUE = '\u0002';
const NO_VALUE = '\u0003';

/** The field whose moves the price brake watches, per entity (none for products). */
export const PRICE_FIELD: Readonly<Record<Entity, string | null>> = {
  products: null,
  product_store: 'current_price',
  transactions: 'price',
  competitor_prices: 'effective_price',
};

/**
 * True when `text` is already a canonical decimal: an optional `-`, digits without a leading zero (or one `0`), and
 * a fraction without trailing zeros; never `-0`. Most cells are: they skip the regular expression.
 */
function isCanonicalDecimal(text: string): boolean {
  const n = text.length;
  let i = text.charCodeAt(0) === 0x2d ? 1 : 0;
  const start = i;
  let zero = true;
  for (; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2e) break;
    if (c < 0x30 || c > 0x39) return false;
    if (c !== 0x30) zero = false;
  }
  const whole = i - start;
  if (whole === 0 || (whole > 1 && text.charCodeAt(start) === 0x30)) return false;
  if (i === n) return !(zero && start === 1);
  // A fraction: at least one digit, the last one not 0.
  if (i === n - 1 || text.charCodeAt(n - 1) === 0x30) return false;
  for (i += 1; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/** `12.50` -> `12.5`, `-0.0` -> `0`, `.5` -> `0.5`; a value that is not a plain decimal is kept as it is. */
export function canonicalDecimal(value: string | number): string {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value === 0 ? 0 : value);
  const text = typeof value === 'number' ? String(value) : value.trim();
  if (isCanonicalDecimal(text)) return text;
  const match = /^([+-]?)0*(\d*)(?:\.(\d*?)0*)?$/.exec(text);
  if (match === null) return text;
  const [, sign, whole = '', fraction = ''] = match;
  if (whole === '' && fraction === '' && !/\d/.test(text)) return text;
  const digits = `${whole === '' ? '0' : whole}${fraction === '' ? '' : `.${fraction}`}`;
  return digits === '0' || sign !== '-' ? digits : `-${digits}`;
}

/** A scalar as text; anything else (a platform sending an object) as its JSON. */
function textOf(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : (JSON.stringify(value) ?? '');
}

function canonicalValue(kind: FieldKind, value: unknown): string | null {
  if (value === undefined || value === null || value === '') return null;
  switch (kind) {
    case 'decimal':
    case 'integer':
      return typeof value === 'number' || typeof value === 'string' ? canonicalDecimal(value) : textOf(value);
    case 'boolean':
      return textOf(value).trim().toLowerCase();
    case 'date': {
      const text = textOf(value);
      return /^\d{4}-\d{2}-\d{2}/.test(text) ? text.slice(0, 10) : text;
    }
    case 'datetime': {
      const text = textOf(value);
      const ms = Date.parse(text);
      return Number.isNaN(ms) ? text : String(ms);
    }
    case 'string':
      return textOf(value);
  }
}

const KINDS: Readonly<Record<Entity, ReadonlyMap<string, FieldKind>>> = {
  products: new Map(ENTITY_FIELDS.products.map((f) => [f.name, f.kind])),
  product_store: new Map(ENTITY_FIELDS.product_store.map((f) => [f.name, f.kind])),
  transactions: new Map(ENTITY_FIELDS.transactions.map((f) => [f.name, f.kind])),
  competitor_prices: new Map(ENTITY_FIELDS.competitor_prices.map((f) => [f.name, f.kind])),
};

/** The kinds of `fields` for the entity (custom columns of products are strings), computed once per list. */
const kindLists = new WeakMap<readonly string[], readonly FieldKind[]>();
function kindsOf(entity: Entity, fields: readonly string[]): readonly FieldKind[] {
  let kinds = kindLists.get(fields);
  if (kinds === undefined) {
    kinds = fields.map((field) => KINDS[entity].get(field) ?? 'string');
    kindLists.set(fields, kinds);
  }
  return kinds;
}

/** The canonical text of `record` over `fields` (sorted, no duplicates). */
export function canonicalText(entity: Entity, record: Readonly<Record<string, unknown>>, fields: readonly string[]): string {
  const kinds = kindsOf(entity, fields);
  let text = '';
  for (let i = 0; i < fields.length; i++) {
    const value = canonicalValue(kinds[i] as FieldKind, record[fields[i] as string]);
    text += value === null ? NO_VALUE : `${value}${END_OF_VALUE}`;
  }
  return text;
}

/** The fields of a record the agent maps, sorted: what its canonical form covers. */
export function sortedFields(fields: Iterable<string>): string[] {
  return [...new Set(fields)].sort();
}

const hasher = new Hash64Stream();

/**
 * The hash of a row as the API accepts it: hash64 of its canonical text, streamed without building the text (once
 * per row of every file a delta source compares). Never 0/0 (the state's mark for a row the platform changed).
 */
export function contentHash(entity: Entity, record: Readonly<Record<string, unknown>>, fields: readonly string[]): Hash64 {
  const kinds = kindsOf(entity, fields);
  hasher.begin();
  for (let i = 0; i < fields.length; i++) {
    const value = canonicalValue(kinds[i] as FieldKind, record[fields[i] as string]);
    if (value === null) hasher.add(NO_VALUE);
    else {
      hasher.add(value);
      hasher.add(END_OF_VALUE);
    }
  }
  hasher.finish();
  return hasher.hi === 0 && hasher.lo === 0 ? { hi: 0, lo: 1 } : { hi: hasher.hi, lo: hasher.lo };
}

/** The canonical price of a record (for the price brake and its preview), or null. */
export function priceOf(entity: Entity, record: Readonly<Record<string, unknown>>): string | null {
  const field = PRICE_FIELD[entity];
  if (field === null) return null;
  const value = record[field];
  return typeof value === 'string' || typeof value === 'number' ? canonicalDecimal(value) : null;
}

/**
 * A price move from the lower to the higher price, in percent: 1.99 -> 19.90 and 19.90 -> 1.99 are both 900. A move
 * to or from zero is infinite; negative or unreadable prices are not compared (null). For the brake only: the
 * figure decides whether to hold a file, it never becomes a price.
 */
export function priceMovePct(before: string, after: string): number | null {
  return priceMoveOf(Number(before), Number(after));
}

/** priceMovePct of the prices' values. */
export function priceMoveOf(a: number, b: number): number | null {
  if (!Number.isFinite(a) || !Number.isFinite(b) || a < 0 || b < 0) return null;
  if (a === b) return 0;
  if (a === 0 || b === 0) return Number.POSITIVE_INFINITY;
  return (Math.max(a, b) / Math.min(a, b) - 1) * 100;
}
