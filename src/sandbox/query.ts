/**
 * Query-string parsing for the list endpoints: limit (range-checked against LIST_LIMITS), cursor, and typed
 * filters. Problems come back as ValidationErrors with loc ['query', name], like every other 422. Typed values are
 * checked with the shared zod primitives (isoDateTime, isoDate, uuid), so a query datetime is refused for the same
 * reasons a body datetime is. Unknown query parameters are ignored, as FastAPI does, unless the dialect refuses
 * parameters the document does not define (422 extra_forbidden); an expired cursor is a 410 (dialect.ts).
 */
import type { z } from 'zod';
import { isoDate, isoDateTime, toValidationErrors, uuid } from '../api/schemas/index.ts';
import type { PageLimit, ValidationError } from '../api/schemas/index.ts';
import { CURSOR_EXPIRED, decodeCursor, encodeCursor, type CursorClock } from './cursor.ts';
import { DOCUMENTED_QUERY } from './dialect-wire.ts';
import { detail, invalid, validationError, type Reply } from './http-io.ts';
import type { ApiContext } from './world.ts';

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

/** What a list request needs to know of its server: the time (cursor lifetimes) and the dialect's choices. */
export interface ListContext {
  readonly clock: CursorClock;
  /** Refuse query parameters the document does not define (the `documented` list of the endpoint). */
  readonly rejectUnknown: boolean;
}

export function listContext(ctx: Pick<ApiContext, 'world' | 'now'>): ListContext {
  const { dialect } = ctx.world;
  return { clock: { now: ctx.now, ttlMs: dialect.expiryMs }, rejectUnknown: dialect.unknownQuery === 'rejected' };
}

/** The cursor of the page after `position`, as this server issues it. */
export function nextCursorOf(list: string, position: number | null, context: ListContext): string | null {
  return position === null ? null : encodeCursor(list, position, context.clock);
}

export const EXPIRED_CURSOR: Reply = detail(410, 'The cursor has expired; start the listing again');

/** 422 entries for the query parameters a strict server does not accept on `documentedAs` (DOCUMENTED_QUERY). */
export function unknownParameters(
  query: URLSearchParams,
  documentedAs: string,
  supported: readonly string[],
  context: ListContext,
): ValidationError[] {
  if (!context.rejectUnknown) return [];
  const allowed = new Set(DOCUMENTED_QUERY[documentedAs] ?? supported);
  const errors: ValidationError[] = [];
  for (const name of new Set(query.keys())) {
    if (!allowed.has(name)) errors.push(validationError(['query', name], 'Extra inputs are not permitted', 'extra_forbidden', query.get(name)));
  }
  return errors;
}

/**
 * Limit, cursor and filters of a list request, or the reply that refuses it (422, or 410 for an expired cursor).
 * `documentedAs` names the endpoint in DOCUMENTED_QUERY (default: `list`).
 */
export function readListQuery(
  query: URLSearchParams,
  list: string,
  limits: PageLimit,
  kinds: Readonly<Record<string, QueryKind>>,
  context: ListContext,
  documentedAs: string = list,
): ListQuery | Reply {
  const errors = unknownParameters(query, documentedAs, ['limit', 'cursor', ...Object.keys(kinds)], context);
  const limit = parseLimit(query.get('limit'), limits, ['query', 'limit']);
  if (typeof limit !== 'number') errors.push(limit);

  let after: number | null = null;
  const cursor = query.get('cursor');
  if (cursor !== null && cursor !== '') {
    const position = decodeCursor(list, cursor, context.clock);
    if (position === CURSOR_EXPIRED) return EXPIRED_CURSOR;
    after = position;
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
  if (errors.length > 0 || typeof limit !== 'number') return invalid(errors);
  return { limit, after, filters };
}

export function isReply(value: ListQuery | Reply): value is Reply {
  return 'status' in value;
}
