/**
 * `duplicate_keys: sum` (transactions, the default): two lines of a file with the same transaction_id are two events
 * of one sale (a till that writes one line per unit, or the same item scanned twice on a ticket), not a correction of
 * the first. They become one transaction whose quantity is the sum, when they agree on everything else: item,
 * price, time, store, currency, promotion. `revenue` scales with the quantity, so it is summed too. Lines that
 * disagree are not added up and none is dropped in silence: the caller rejects every one of them (duplicate-keys.ts).
 *
 * Quantities stay decimal strings: the sum is exact (scaled integers), never a float.
 */
import { canonicalDecimal } from '../delta/delta-plan.ts';

type Row = Readonly<Record<string, unknown>>;

/** Fields added up across the lines of one transaction; every other field must agree. */
export const SUMMED_FIELDS: readonly string[] = ['quantity', 'revenue'];

/** Fields compared as decimals (12.5 and 12.50 are the same price). */
const DECIMAL_FIELDS = new Set(['price']);

export type LineSum = { readonly row: Row } | { readonly differ: readonly string[] };

/**
 * The lines of one key added up one at a time, in file order: memory holds the first line and the sums, whatever the
 * number of lines (a file of a million lines with one key is one row, not a million kept).
 */
export class LineSummer {
  #first: Row | undefined;
  readonly #differ = new Set<string>();
  readonly #sums = new Map<string, string | null>();

  add(row: Row): void {
    const first = this.#first;
    if (first === undefined) {
      this.#first = row;
      for (const field of SUMMED_FIELDS) this.#sums.set(field, decimalOrNull(row[field]));
      return;
    }
    for (const field of new Set([...Object.keys(first), ...Object.keys(row)])) {
      if (SUMMED_FIELDS.includes(field)) {
        // Present on one line and absent on another: there is no sum to send (an absent quantity is not 0 or 1).
        const sum = this.#sums.get(field) ?? null;
        const value = decimalOrNull(row[field]);
        if ((sum === null) !== (value === null)) this.#differ.add(field);
        else if (sum !== null && value !== null && !this.#differ.has(field)) this.#sums.set(field, addDecimals(sum, value));
      } else if (!same(field, first[field], row[field])) this.#differ.add(field);
    }
  }

  /** The lines as one row; or the fields on which they disagree. */
  result(): LineSum {
    if (this.#first === undefined) return { differ: [] };
    if (this.#differ.size > 0) return { differ: [...this.#differ] };
    const row: Record<string, unknown> = { ...this.#first };
    for (const [field, sum] of this.#sums) if (sum !== null) row[field] = sum;
    return { row };
  }
}

/** The lines of one key, in file order, as one row; or the fields on which they disagree. */
export function sumLines(rows: readonly Row[]): LineSum {
  const summer = new LineSummer();
  for (const row of rows) summer.add(row);
  return summer.result();
}

/** A decimal field's value as text (the reader gives strings; a number is taken as its shortest form). */
function decimalOrNull(value: unknown): string | null {
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' && value !== '' ? value : null;
}

function same(field: string, a: unknown, b: unknown): boolean {
  const absent = (v: unknown) => v === undefined || v === null || v === '';
  if (absent(a) || absent(b)) return absent(a) && absent(b);
  const decimal = (v: unknown): v is string | number => typeof v === 'string' || typeof v === 'number';
  // The delta engine's canonical form: 12.5 and 12.50 are one price there too.
  if (DECIMAL_FIELDS.has(field) && decimal(a) && decimal(b)) return canonicalDecimal(a) === canonicalDecimal(b);
  return JSON.stringify(a) === JSON.stringify(b);
}

interface Scaled {
  readonly units: bigint;
  readonly scale: number;
}

/** `-1.50` -> { units: -150n, scale: 2 }; null for text that is not a plain decimal. */
function parseDecimal(text: string): Scaled | null {
  const match = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(text.trim());
  if (match === null) return null;
  const [, sign = '', whole = '', fraction = ''] = match;
  if (whole === '' && fraction === '') return null;
  const units = BigInt(`${whole === '' ? '0' : whole}${fraction}`);
  return { units: sign === '-' ? -units : units, scale: fraction.length };
}

/** The exact sum of two decimal strings, with the larger of their scales (`1.50` + `2` = `3.50`). */
export function addDecimals(a: string, b: string): string {
  const x = parseDecimal(a);
  const y = parseDecimal(b);
  if (x === null || y === null) throw new Error(`not decimals: ${a}, ${b}`);
  const scale = Math.max(x.scale, y.scale);
  const units = x.units * 10n ** BigInt(scale - x.scale) + y.units * 10n ** BigInt(scale - y.scale);
  const digits = (units < 0n ? -units : units).toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return units < 0n ? `-${text}` : text;
}
