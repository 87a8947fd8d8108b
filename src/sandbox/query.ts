/**
 * Query-string parsing for the list endpoints: limit (range-checked against LIST_LIMITS), cursor, and typed
 * filters. Problems come back as ValidationErrors with loc ['query', name], like every other 422. Typed values are
 * checked with the shared zod primitives (isoDateTime, isoDate, uuid), so a query datetime is refused for the same
 * reasons a body datetime is. Unknown query parameters are ignored, as FastAPI does.
 */
import type { z } from 'zod';
import { isoDate, isoDateTime, toValidationErrors, uuid } from '../api/schemas/index.ts';
import type { PageLimit, ValidationError } from '../api/schemas/index.ts';
import { decodeCursor } from './cursor.ts';
import { validationError } from './http-io.ts';

export type QueryKind = 'string' | 'datetime' | 'date' | 'uuid' | 'bool';

export interface ListQuery {
  readonly limit: number;
  /** Keyset position decoded from the cursor, or null for the first page. */
  readonly after: number | null;
  /** Filters that were given, as strings (booleans as 'true' / 'false'). */
  readonly filters: Readonly<Record<string, string>>;
}

const KIND_SCHEMA: Partial<Record<QueryKind, z.ZodType>> = { datetime: isoDateTime, date: isoDate, uuid };

export function parseLimit(raw: string | null, limits: PageLimit, loc: (string | number)[]): number | ValidationError {
  if (raw === null) return limits.default;
  if (!/^[+-]?\d+$/.test(raw.trim())) {
    return validationError(loc, 'Input should be a valid integer, unable to parse string as an integer', 'int_parsing', raw);
  }
  const value = Number(raw);
  if (value < 1) return { ...validationError(loc, 'Input should be greater than or equal to 1', 'greater_than_equal', raw), ctx: { ge: 1 } };
  if (value > limits.max) {
    return { ...validationError(loc, `Input should be less than or equal to ${limits.max}`, 'less_than_equal', raw), ctx: { le: limits.max } };
  }
  return value;
}

/** Checks one typed value; booleans are normalized to 'true' / 'false'. */
export function checkValue(kind: QueryKind, raw: string, loc: (string | number)[]): string | ValidationError[] {
  if (kind === 'bool') {
    const lower = raw.toLowerCase();
    if (['true', '1', 'yes', 'on'].includes(lower)) return 'true';
    if (['false', '0', 'no', 'off'].includes(lower)) return 'false';
    return [validationError(loc, 'Input should be a valid boolean, unable to interpret input', 'bool_parsing', raw)];
  }
  const schema = KIND_SCHEMA[kind];
  if (!schema) return raw;
  const result = schema.safeParse(raw, { reportInput: true });
  return result.success ? raw : toValidationErrors(result.error, loc);
}

export function readListQuery(
  query: URLSearchParams,
  list: string,
  limits: PageLimit,
  kinds: Readonly<Record<string, QueryKind>>,
): ListQuery | ValidationError[] {
  const errors: ValidationError[] = [];
  const limit = parseLimit(query.get('limit'), limits, ['query', 'limit']);
  if (typeof limit !== 'number') errors.push(limit);

  let after: number | null = null;
  const cursor = query.get('cursor');
  if (cursor !== null && cursor !== '') {
    after = decodeCursor(list, cursor);
    if (after === null) errors.push(validationError(['query', 'cursor'], 'Invalid cursor', 'value_error', cursor));
  }

  const filters: Record<string, string> = {};
  for (const [name, kind] of Object.entries(kinds)) {
    const raw = query.get(name);
    if (raw === null) continue;
    const checked = checkValue(kind, raw, ['query', name]);
    if (typeof checked === 'string') filters[name] = checked;
    else errors.push(...checked);
  }
  if (errors.length > 0 || typeof limit !== 'number') return errors;
  return { limit, after, filters };
}
